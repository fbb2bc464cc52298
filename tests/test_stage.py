"""A long stage says that it runs, that it is still running, and how long it took."""

import logging
import time

import pytest

from tx_keras.training.stage import stage


def test_a_stage_logs_start_heartbeats_and_its_duration(caplog):
    caplog.set_level(logging.INFO, logger="tx_keras.run")
    with stage("decoding", heartbeat_s=0.05):
        time.sleep(0.2)
    messages = [record.getMessage() for record in caplog.records]
    assert messages[0] == "decoding ..." and messages[-1] == "decoding: done in 0:00"
    assert 2 <= sum(message.startswith("decoding: still running (0:00)") for message in messages) <= 5


def test_a_failing_stage_does_not_claim_it_is_done(caplog):
    caplog.set_level(logging.INFO, logger="tx_keras.run")
    with pytest.raises(ValueError), stage("export", heartbeat_s=10):
        raise ValueError("disk full")
    assert [record.getMessage() for record in caplog.records] == ["export ..."]
