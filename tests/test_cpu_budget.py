"""trainer.max_train_cpu_minutes (issue 67): training stops once the process has used that much CPU time,
and summary.json records the budget and the CPU minutes used beside the wall figures."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.ahead import ahead_fixture
from tests.conftest import TINY, tx_train
from tx_keras.training.callbacks.time_budget import TimeBudget, process_cpu_seconds


@ahead_fixture
def cpu_budget_run(folder: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """A tiny run of 50 epochs under a CPU budget of 6 ms, in a fresh process: the CPU clock counts
    finished child processes too, and in pytest's own process the tx-train children of the setups started
    ahead (tests/ahead.py) end at any moment."""
    overrides = [*TINY, "trainer.epochs=50", "trainer.max_train_cpu_minutes=0.0001", "export.enabled=false"]
    result = tx_train(*overrides, "logging.tensorboard=false", f"hydra.run.dir={folder / 'run'}", cwd=folder)
    return result, folder / "run"


def test_a_cpu_budget_ends_training_after_its_first_step_and_says_so(cpu_budget_run):
    result, run_dir = cpu_budget_run
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs"] == 1
    assert summary["stopped_by"] == "CPU-time budget: trainer.max_train_cpu_minutes=0.0001"
    assert summary["optimizer_steps"] == 1  # 6 ms of CPU: the first step alone spends more
    used = summary["cpu_budget"]["cpu_minutes_used"]
    assert summary["cpu_budget"]["max_train_cpu_minutes"] == 0.0001 and used > 0.0001
    # The budget's clock and the summary's wall figures measure the same process: what the budget counted
    # (training up to the stop) is within what the fit used in all (its validation included).
    assert used * 60 <= summary["train_cpu_s"] + 0.05
    assert summary["config"]["trainer"]["max_train_cpu_minutes"] == 0.0001


def test_the_cpu_clock_counts_this_process_s_work_not_the_wall():
    budget = TimeBudget.cpu(minutes=1.0, spent_minutes=0.5)  # a resumed run, 30 of its 60 s spent
    before = process_cpu_seconds()
    sum(i * i for i in range(2_000_000))  # ~0.1 s of one core's work
    worked = process_cpu_seconds() - before
    assert worked > 0.02
    assert budget.elapsed() == pytest.approx(30.0 + worked, abs=0.05)
