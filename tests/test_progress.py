"""Progress in a non-terminal run: a line every `progress_every_s` seconds and one per epoch."""

import re

import pytest

from tests.ahead import job
from tests.conftest import TINY, tx_train


@job("logged_run")
def _logged_run(root):
    args = [arg for arg in TINY if not arg.startswith(("logging.verbose=", "data.num_train="))]
    run_dir = root / "run"
    return tx_train(
        *args,
        "data.num_train=2048",  # 32 steps an epoch
        "logging.verbose=1",
        "logging.progress_every_s=1",
        "export.enabled=false",
        f"hydra.run.dir={run_dir}",
        cwd=root,
    ), run_dir


@pytest.fixture
def logged_run(ahead):
    """The run below, started ahead (tests/ahead.py)."""
    return ahead.result("logged_run")


def test_a_logged_run_prints_progress_lines(logged_run):
    result, run_dir = logged_run
    assert result.returncode == 0, result.stderr[-2000:]
    steps = re.findall(
        r"^epoch (\d)/2 step (\d+)/32: loss [\d.]+, [\d,]+ tok/s, run ETA \d+:\d\d$", result.stdout, re.M
    )
    assert steps, result.stdout
    epochs = re.findall(r"^epoch (\d)/2 \(\d+:\d\d\): loss [\d.]+ accuracy .* val_loss ", result.stdout, re.M)
    assert epochs == ["1", "2"], result.stdout
    first = re.findall(r"^first training step done \((\d+):(\d\d) with its trace\)$", result.stdout, re.M)
    assert len(first) == 1, result.stdout  # once a process, not once an epoch: the start-up figure
    for stage in ("data: translation", "evaluation: decoding the validation and test splits"):
        assert re.search(rf"^{stage}.*: done in \d+:\d\d$", result.stdout, re.M), stage
    assert "\r" not in result.stdout + result.stderr  # no bar redrawn in a log file
    assert "tok/s" in (run_dir / "train.log").read_text()
