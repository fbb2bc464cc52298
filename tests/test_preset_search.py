"""The preset search (sweeps/sweep/preset_search.yaml) at toy size: a seeded Optuna search of two trials on a
generated corpus under a CPU-time budget, then the same command on the same folder with one more trial, which
replays the finished trials from their run folders and trains only the new one."""

import json
from pathlib import Path

import yaml

from tests.ahead import ahead_fixture
from tests.conftest import tx_train
from tests.test_parallel_text import _pairs
from tx_keras.cli import compare

# The search's own space stays; these fixed values shrink each trial (a command-line value of a searched key
# takes it out of Optuna's space).
TOY = [
    "model.num_encoder_layers=1",
    "model.num_decoder_layers=1",
    "model.d_model=32",
    "model.dff=64",
    "model.num_heads=2",
    "trainer.batch_tokens=128",
    "data.num_validation=8",
    "data.num_test=8",
    "data.vocab_size=120",
    "trainer.epochs=1",
    "trainer.max_train_cpu_minutes=0.05",
    "trainer.checkpoint_every=0",
    "logging.probes=2",
    "export.enabled=false",  # the search ranks validation figures; no trial's SavedModel is read
]


def _summaries(sweep_dir):
    return {path.parent.name: json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")}


@ahead_fixture
def preset_search_runs(root: Path) -> dict:
    """A two-trial search, what it left, then the same command on the same folder with one more trial."""
    corpus = root / "pairs.tsv"
    corpus.write_text("".join(f"{en}\t{fr}\n" for en, fr in _pairs()), encoding="utf-8")
    sweep_dir = root / "search"
    args = ["sweep=preset_search", f"data.path={corpus}", f"data.cache_dir={root / 'cache'}", *TOY]
    first = tx_train(*args, "hydra.sweeper.n_trials=2", f"hydra.sweep.dir={sweep_dir}", cwd=root)
    runs = _summaries(sweep_dir)
    results = sweep_dir / "optimization_results.yaml"
    best = yaml.safe_load(results.read_text()) if results.exists() else None
    again = tx_train(*args, "hydra.sweeper.n_trials=3", f"hydra.sweep.dir={sweep_dir}", cwd=root)
    return {"first": first, "runs": runs, "best": best, "again": again, "sweep_dir": sweep_dir}


def test_a_two_trial_search_runs_and_a_rerun_replays_it(preset_search_runs, capsys):
    first, runs, sweep_dir = (
        preset_search_runs["first"],
        preset_search_runs["runs"],
        preset_search_runs["sweep_dir"],
    )
    assert first.returncode == 0, first.stderr[-3000:]
    assert sorted(runs) == ["0", "1"] and {s["status"] for s in runs.values()} == {"completed"}
    for job, summary in runs.items():
        assert not (sweep_dir / job / "translations").exists()  # no test translations either
        trainer = summary["config"]["trainer"]
        assert trainer["max_train_cpu_minutes"] == 0.05 and trainer["max_train_minutes"] is None
        assert 0.0 <= summary["config"]["model"]["dropout"] <= 0.3
        assert 500 <= trainer["warmup_steps"] <= 4000
        assert "validation_bleu" in summary["metrics"]
        assert not [name for name in summary["metrics"] if name.startswith("test_")]  # validation chooses
        assert not [name for name in summary["metrics"] if name.endswith("_beam")]  # greedy: the objective
        assert summary["stopped_by"].startswith("CPU-time budget")  # one epoch takes longer than 3 CPU-s
        assert summary["cpu_budget"]["cpu_minutes_used"] >= 0.05
    proposed = [runs[job]["config"]["trainer"]["warmup_steps"] for job in ("0", "1")]
    best = preset_search_runs["best"]
    assert best["best_value"] == max(s["metrics"]["validation_bleu"] for s in runs.values())

    again = preset_search_runs["again"]
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("already completed; skipped") == 2  # the seeded sampler proposed them again
    runs = _summaries(sweep_dir)
    assert sorted(runs) == ["0", "1", "2"]
    assert [runs[job]["config"]["trainer"]["warmup_steps"] for job in ("0", "1")] == proposed

    # Optuna's importances rebuilt from the three run folders (the study itself lived in memory)
    capsys.readouterr()
    compare.main([str(sweep_dir), "--importance"])
    printed = capsys.readouterr().out
    assert "3 trials used" in printed and "trainer.warmup_steps" in printed
