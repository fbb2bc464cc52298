"""Ready sweeps through real Hydra sweepers and launchers: failure isolation, resume, tx-compare."""

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ahead import ahead_fixture, needs
from tests.conftest import tx_train

# The `smoke` sweep's launcher: its two jobs in parallel processes (the basic, sequential launcher runs the
# sweep with failing jobs below).
JOBLIB = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]

# Four jobs: two with a bad config value (trainer.epochs=0), one that fails at run time (the copy task
# cannot make 320 distinct sequences of 3 symbols out of 2) and one that completes.
WITH_FAILURES = [
    "data=copy",
    "data.length=3",
    "data.min_length=3",
    "model.num_heads=1",
    "data.vocab_size=2,16",
    "trainer.epochs=0,1",
]


def _summaries(sweep_dir):
    return {path.parent.name: json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")}


def _overrides(job_name: str) -> dict[str, str]:
    """A job folder's overrides: `3_data.vocab_size=16,trainer.epochs=1` -> {"data.vocab_size": "16", ...}."""
    return dict(item.split("=", 1) for item in job_name.split("_", 1)[1].split(","))


@ahead_fixture
def smoke_sweep(root):
    """The `smoke` sweep on the joblib launcher; started ahead (tests/ahead.py)."""
    result = tx_train("sweep=smoke", *JOBLIB, f"hydra.sweep.dir={root / 'sweep'}", cwd=root)
    return result, root / "sweep"


def test_smoke_sweep_runs_every_job_into_one_folder_named_by_overrides(smoke_sweep):
    result, sweep_dir = smoke_sweep
    assert result.returncode == 0, result.stderr[-2000:]
    summaries = _summaries(sweep_dir)
    assert set(summaries) == {"0_model.num_heads=1", "1_model.num_heads=2"}
    assert all(summary["status"] == "completed" for summary in summaries.values())
    assert [summary["config"]["model"]["num_heads"] for _, summary in sorted(summaries.items())] == [1, 2]
    assert "2 jobs: 2 completed" in result.stderr


def test_a_sweep_ends_with_its_table_of_jobs_and_the_next_commands(smoke_sweep):
    result, sweep_dir = smoke_sweep
    summaries = _summaries(sweep_dir)
    for name, summary in summaries.items():
        value = summary["metrics"]["validation_exact_match"]
        assert re.search(rf"tx-train:  completed +{value:.4f}  {re.escape(name)}$", result.stderr, re.M), name
        assert summary["config"]["trainer"]["early_stopping"]["patience"] is None  # sweeps train all epochs
    assert f"tx-train: next: tx-compare {sweep_dir}   |   tx-board {sweep_dir}" in result.stderr


@ahead_fixture
def sweep_with_failures(root):
    """The sweep of the test below, started ahead (tests/ahead.py): (its result, its folder's parent)."""
    return tx_train("sweep=smoke", *WITH_FAILURES, f"hydra.sweep.dir={root / 'sweep'}", cwd=root), root


def test_failing_jobs_are_recorded_and_the_sweep_goes_on(sweep_with_failures):
    """A job that raises at run time and jobs with a bad config value (the config check runs once per job,
    inside the job: training/run/job.py) are recorded as failed; the sweep goes on to the one that
    completes."""
    result, root = sweep_with_failures
    assert result.returncode == 3, result.stderr[-2000:]
    jobs = {}
    for name, summary in _summaries(root / "sweep").items():
        overrides = _overrides(name)
        jobs[overrides["data.vocab_size"], overrides["trainer.epochs"]] = summary
    assert sorted(jobs) == [("16", "0"), ("16", "1"), ("2", "0"), ("2", "1")]
    assert jobs["2", "1"]["status"] == "failed"
    reason = "ConfigError: data: task 'copy' can produce only 8 distinct sources"
    assert jobs["2", "1"]["reason"].startswith(reason)
    assert jobs["16", "0"]["status"] == jobs["2", "0"]["status"] == "failed"
    assert jobs["16", "0"]["reason"] == "config: trainer.epochs=0 must be >= 1"
    assert jobs["16", "1"]["status"] == "completed"
    assert "4 jobs: 1 completed, 3 failed" in result.stderr
    assert "Traceback" not in result.stderr


@ahead_fixture
def rerun_sweep(folder: Path) -> tuple[Path, str, list[str], subprocess.CompletedProcess]:
    """The smoke sweep copied, one job's summary deleted, then the same sweep command run again on it."""
    sweep_dir = folder / "sweep"
    shutil.copytree(needs("smoke_sweep")[1], sweep_dir)
    kept = sweep_dir / "0_model.num_heads=1"
    kept_summary = (kept / "summary.json").read_text()
    kept_events = sorted(path.name for path in (kept / "train").iterdir())
    (sweep_dir / "1_model.num_heads=2" / "summary.json").unlink()
    result = tx_train("sweep=smoke", f"hydra.sweep.dir={sweep_dir}", cwd=folder)
    return sweep_dir, kept_summary, kept_events, result


def test_rerunning_a_sweep_reruns_only_jobs_without_a_completed_summary(rerun_sweep):
    sweep_dir, kept_summary, kept_events, result = rerun_sweep
    kept, deleted = sweep_dir / "0_model.num_heads=1", sweep_dir / "1_model.num_heads=2"
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{kept} already completed; skipped" in result.stdout
    assert (kept / "summary.json").read_text() == kept_summary  # untouched
    assert sorted(path.name for path in (kept / "train").iterdir()) == kept_events  # not retrained
    assert json.loads((deleted / "summary.json").read_text())["status"] == "completed"


def test_tx_compare_rows_match_the_summaries(smoke_sweep, tmp_path, capsys):
    """Through tx-compare's main in this process (it reads files and draws; a fresh process would add
    only its start-up)."""
    from tx_keras.cli.compare import main as tx_compare

    _, sweep_dir = smoke_sweep
    tx_compare([str(sweep_dir), "--metric", "validation_loss", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    with open(tmp_path / "comparison.csv") as stream:
        rows = list(csv.DictReader(stream))
    summaries = {name.split("_")[0]: summary for name, summary in _summaries(sweep_dir).items()}
    assert sorted(row["run"] for row in rows) == sorted(summaries)
    losses = [float(row["validation_loss"]) for row in rows]
    assert losses == sorted(losses)  # a loss sorts best (lowest) first
    for row in rows:
        summary = summaries[row["run"]]
        assert row["status"] == summary["status"]
        assert row["model.num_heads"] == str(summary["config"]["model"]["num_heads"])
        assert float(row["validation_loss"]) == pytest.approx(summary["metrics"]["validation_loss"], abs=1e-4)
        assert int(row["parameters"]) == summary["parameters"]
    assert "validation_loss" in printed.splitlines()[0]
    for name in ("comparison.md", "validation_curves.png", "validation_loss_by_knob.png"):
        assert (tmp_path / name).stat().st_size > 100


def test_the_joblib_launcher_runs_every_job_in_parallel_processes(smoke_sweep):
    result, sweep_dir = smoke_sweep
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Joblib.Parallel(n_jobs=2" in result.stdout + result.stderr
    assert [s["status"] for s in _summaries(sweep_dir).values()] == ["completed"] * 2


@pytest.mark.slow  # ~40 s, mostly starting Ray: kept out of the default run on 2 cores
def test_the_ray_launcher_runs_every_job_as_tasks_on_a_local_instance(tmp_path):
    launcher = ["hydra/launcher=ray", "hydra.launcher.ray.init.num_cpus=2"]
    result = tx_train("sweep=smoke", *launcher, f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Started a local Ray instance" in result.stdout + result.stderr
    assert [s["status"] for s in _summaries(tmp_path / "sweep").values()] == ["completed"] * 2


@pytest.mark.slow  # ~64 s on 2 cores; the basic sweeper and joblib launcher stay in the default run
def test_optuna_sweeper_runs_seeded_trials(tmp_path):
    result = tx_train(
        "sweep=optuna",
        "model=tiny",
        "trainer.epochs=1",
        "data.num_train=256",
        "data.num_validation=32",
        "data.num_test=32",
        "logging.verbose=0",
        "hydra.sweeper.n_trials=3",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summaries = _summaries(tmp_path / "sweep")
    assert len(summaries) == 3 and all(s["status"] == "completed" for s in summaries.values())
    learning_rates = {s["config"]["trainer"]["lr_scale"] for s in summaries.values()}
    assert len(learning_rates) == 3 and all(0.1 <= lr <= 4.0 for lr in learning_rates)
    best = (tmp_path / "sweep" / "optimization_results.yaml").read_text()
    assert "best_value" in best


def test_every_ready_sweep_composes_and_the_depth_sweep_builds_matching_stacks():
    from hydra import compose, initialize_config_module

    from tx_keras.data import build_task
    from tx_keras.training.run.config_check import check_config
    from tx_keras.training.run.model_build import build_model

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        for name in ("smoke", "heads", "depth_residual", "norm", "ffn", "optuna"):
            check_config(compose(config_name="config", overrides=[f"sweep={name}"]))
        cfg = compose(config_name="config", overrides=["sweep=depth_residual", "model.num_encoder_layers=3"])
    task = build_task(
        {"name": "copy", "length": 4, "min_length": 4, "num_train": 8, "num_validation": 2, "num_test": 2}
    )
    model = build_model(check_config(cfg).model, task)  # the decoder depth: an interpolation of the encoder's
    assert model.num_encoder_layers == model.num_decoder_layers == 3
