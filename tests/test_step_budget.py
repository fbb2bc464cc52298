"""trainer.max_steps: training stops after that many optimizer steps, the same on any host; a rerun skips
the finished run, a resume that had spent its budget trains nothing, and a larger budget extends the run."""

import json

import pytest

from tests.ahead import ahead_fixture
from tests.conftest import TINY, tx_train
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, load_checkpoint


def _arguments(run_dir):
    """16 steps an epoch (256 pairs, 16 a batch): a budget of 5 steps ends inside the first epoch."""
    return [*TINY, "trainer.epochs=3", "trainer.batch_size=16", "trainer.max_steps=5", "export.enabled=false",
            f"hydra.run.dir={run_dir}"]  # fmt: skip


@ahead_fixture
def step_budget_run(root):
    """The first run of the test below, started ahead (tests/ahead.py): (its result, its folder)."""
    return tx_train(*_arguments(root / "run"), cwd=root), root


def _summary(run_dir) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


@pytest.mark.slow  # two runs: ~28 s (test_cpu_budget and test_time_budget keep budgets in the default run)
def test_a_step_budget_ends_training_at_its_step_and_a_larger_one_extends_the_run(step_budget_run):
    result, root = step_budget_run
    run_dir = root / "run"
    assert result.returncode == 0, result.stderr[-2000:]
    summary = _summary(run_dir)
    assert summary["status"] == "completed" and summary["stopped_by"] == "step budget: trainer.max_steps=5"
    assert summary["optimizer_steps"] == 5 and summary["epochs"] == 1  # the first epoch, cut short
    assert load_checkpoint(run_dir / CHECKPOINT_PATH).step == 5
    again = tx_train(*_arguments(run_dir), cwd=root)
    assert again.returncode == 0 and "already completed; skipped" in again.stdout
    # Killed after its last checkpoint but before its summary: the resume has no step left to take (Keras'
    # fit would take one before any callback could stop it).
    (run_dir / "summary.json").unlink()
    resumed = tx_train(*_arguments(run_dir), cwd=root)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = _summary(run_dir)
    assert summary["optimizer_steps"] == 5 and summary["status"] == "completed"
    assert summary["stopped_by"] == "step budget: trainer.max_steps=5 (before this resume)"
    # More steps: the run continues from its checkpoint with the next epoch and stops at the new budget.
    longer = tx_train(f"resume={run_dir}", "trainer.max_steps=9", cwd=root)
    assert longer.returncode == 0, longer.stderr[-2000:]
    summary = _summary(run_dir)
    assert summary["optimizer_steps"] == 9 and summary["epochs"] == 2
    assert summary["stopped_by"] == "step budget: trainer.max_steps=9"
    assert load_checkpoint(run_dir / CHECKPOINT_PATH).step == 9
