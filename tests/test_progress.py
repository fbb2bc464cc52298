"""Progress in a non-terminal run: a line every `progress_every_s` seconds and one per epoch."""

import logging
import re
import sys
from datetime import datetime
from itertools import pairwise

from tests.ahead import ahead_fixture
from tests.conftest import TINY, tx_train
from tx_keras.training.callbacks.progress import Progress


@ahead_fixture
def logged_run(root):
    """The run below, started ahead (tests/ahead.py)."""
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
    log = (run_dir / "train.log").read_text()
    assert "tok/s" in log
    # No more often than every second (progress_every_s=1), by the log's own time stamps; how often at
    # most is the test below's, on a clock that moves by steps.
    for epoch in ("1", "2"):
        times = [
            datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")
            for stamp in re.findall(rf"^(\S+ \S+) INFO \S+: epoch {epoch}/2 step \d+/32: ", log, re.M)
        ]
        assert all((later - earlier).total_seconds() >= 0.99 for earlier, later in pairwise(times)), times


class _StepClock:
    """Stands in for the progress module's `time`: a monotonic clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_a_line_comes_once_progress_every_s_has_passed_since_the_last_one(monkeypatch, caplog):
    """Steps of 0.4 s and a line every 1 s: a line after steps 3, 6 and 9 of each 10-step epoch (1.2 s
    after the last line), none in between, and the count starts again with each epoch."""
    clock = _StepClock()
    monkeypatch.setattr(sys.modules[Progress.__module__], "time", clock)
    progress = Progress(2, 10, tokens_per_step=100, every_s=1.0, terminal=False, verbose=1)
    with caplog.at_level(logging.INFO, logger="tx_keras.progress"):
        for epoch in range(2):
            progress.on_epoch_begin(epoch)
            for batch in range(10):
                clock.now += 0.4
                progress.on_train_batch_end(batch, {"loss": 1.0})
            progress.on_epoch_end(epoch, {"loss": 1.0})
    lines = [record.getMessage() for record in caplog.records]
    lines = [line for line in lines if re.match(r"epoch \d/2 step ", line)]
    steps = [re.match(r"epoch (\d)/2 step (\d+)/10: ", line).groups() for line in lines]
    assert steps == [(epoch, step) for epoch in ("1", "2") for step in ("3", "6", "9")], lines
    # Step 3: 2 steps in the 0.8 s since the first one ended (200 tokens: 250 tok/s), 17 steps left at
    # 0.4 s each (6.8 s).
    assert lines[0] == "epoch 1/2 step 3/10: loss 1.0000, 250 tok/s, run ETA 0:07"
