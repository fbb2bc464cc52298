"""A long stage says that it runs, that it is still running, and how long it took."""

import logging
import threading

import pytest

from tx_keras.training.run.stage import WallTimer, stage


class _Timer(WallTimer):
    """A clock that moves only when the heartbeat waits: each wait `seconds` pass, until `beats` waits
    have timed out; then it blocks until the stage finishes, as a real wait does."""

    def __init__(self, beats: int):
        self.time, self.beats = 100.0, beats
        self.beaten = threading.Event()

    def now(self) -> float:
        return self.time

    def wait(self, finished: threading.Event, seconds: float) -> bool:
        if self.beats == 0:
            self.beaten.set()
            return finished.wait()
        self.beats -= 1
        self.time += seconds
        return False


def test_a_stage_logs_start_heartbeats_and_its_duration(caplog):
    caplog.set_level(logging.INFO, logger="tx_keras.run")
    timer = _Timer(beats=3)
    with stage("decoding", heartbeat_s=30, timer=timer):
        assert timer.beaten.wait(timeout=10)  # the three heartbeats are logged
        timer.time += 5  # the stage's own work after the last heartbeat
    assert [record.getMessage() for record in caplog.records] == [
        "decoding ...",
        "decoding: still running (0:30)",
        "decoding: still running (1:00)",
        "decoding: still running (1:30)",
        "decoding: done in 1:35",
    ]


def test_a_short_stage_on_the_wall_clock_logs_no_heartbeat(caplog):
    caplog.set_level(logging.INFO, logger="tx_keras.run")
    with stage("saving the model", heartbeat_s=600):
        pass
    assert [record.getMessage() for record in caplog.records] == [
        "saving the model ...",
        "saving the model: done in 0:00",
    ]


def test_a_failing_stage_does_not_claim_it_is_done(caplog):
    caplog.set_level(logging.INFO, logger="tx_keras.run")
    with pytest.raises(ValueError), stage("export", heartbeat_s=10):
        raise ValueError("disk full")
    assert [record.getMessage() for record in caplog.records] == ["export ..."]
