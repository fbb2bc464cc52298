"""The preset search (sweeps/sweep/preset_search.yaml) at toy size: a seeded Optuna search of two trials on a
generated corpus under a CPU-time budget, then the same command on the same folder with one more trial, which
replays the finished trials from their run folders and trains only the new one."""

import json

import yaml

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
    "export.beam_width=1",  # greedy test figures: no beam search or length-penalty grid to trace
    "export.length_penalty=0.6",
]


def _summaries(sweep_dir):
    return {path.parent.name: json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")}


def test_a_two_trial_search_runs_and_a_rerun_replays_it(tmp_path, capsys):
    corpus = tmp_path / "pairs.tsv"
    corpus.write_text("".join(f"{en}\t{fr}\n" for en, fr in _pairs()), encoding="utf-8")
    sweep_dir = tmp_path / "search"
    args = ["sweep=preset_search", f"data.path={corpus}", f"data.cache_dir={tmp_path / 'cache'}", *TOY]
    first = tx_train(*args, "hydra.sweeper.n_trials=2", f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    runs = _summaries(sweep_dir)
    assert sorted(runs) == ["0", "1"] and {s["status"] for s in runs.values()} == {"completed"}
    for summary in runs.values():
        trainer = summary["config"]["trainer"]
        assert trainer["max_train_cpu_minutes"] == 0.05 and trainer["max_train_minutes"] is None
        assert 0.0 <= summary["config"]["model"]["dropout"] <= 0.3
        assert 500 <= trainer["warmup_steps"] <= 4000
        assert "validation_bleu" in summary["metrics"]
        assert summary["stopped_by"].startswith("CPU-time budget")  # one epoch takes longer than 3 CPU-s
        assert summary["cpu_budget"]["cpu_minutes_used"] >= 0.05
    proposed = [runs[job]["config"]["trainer"]["warmup_steps"] for job in ("0", "1")]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert best["best_value"] == max(s["metrics"]["validation_bleu"] for s in runs.values())

    again = tx_train(*args, "hydra.sweeper.n_trials=3", f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path)
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
