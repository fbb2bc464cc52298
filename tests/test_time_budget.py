"""trainer.max_train_minutes: training stops on time, the run is still evaluated, and a rerun of the same
command treats it as done instead of training again."""

import json
import math

import pytest

from tests.ahead import ahead_fixture
from tests.conftest import TINY, tx_train


def _arguments(run_dir):
    return [*TINY, "trainer.epochs=50", "trainer.max_train_minutes=0.0001", f"hydra.run.dir={run_dir}"]


@ahead_fixture
def budget_run(root):
    """The first run of the test below, started ahead (tests/ahead.py): (its result, its folder)."""
    return tx_train(*_arguments(root / "run"), "export.enabled=false", cwd=root), root


def test_a_time_budget_ends_training_and_the_run_counts_as_done(budget_run):
    result, root = budget_run
    run_dir, arguments = root / "run", _arguments(root / "run")
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs"] == 1
    assert summary["stopped_by"] == "time budget: trainer.max_train_minutes=0.0001"
    # Evaluated after about one step: the per-token validation loss of a model that has hardly trained is
    # about ln(vocabulary size), and nothing is translated exactly.
    vocabulary = len((run_dir / "target_vocab.txt").read_text(encoding="utf-8").splitlines())
    assert summary["metrics"]["validation_loss"] == pytest.approx(math.log(vocabulary), rel=0.15)
    assert summary["metrics"]["test_exact_match"] == 0.0 and summary["evaluation_minutes"] > 0
    again = tx_train(*arguments, "export.enabled=false", cwd=root)
    assert again.returncode == 0 and "already completed; skipped" in again.stdout


def test_a_non_positive_budget_is_refused(tmp_path, tx_train_here):
    result = tx_train_here(*TINY, "trainer.max_train_minutes=0", cwd=tmp_path)
    assert result.returncode == 2
    line = "tx-train: error: trainer.max_train_minutes=0.0 must be > 0 (or null for no time limit)"
    assert result.stderr.splitlines() == [line]  # the schema holds a float: 0 reads back as 0.0
