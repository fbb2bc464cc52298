"""trainer.schedule picks the schedule a run trains with."""

import pytest

from tx_keras.training.constant_schedule import ConstantSchedule
from tx_keras.training.learning_rate import build_schedule
from tx_keras.training.schedule import NoamSchedule


def test_noam_is_the_default_and_constant_reads_its_own_keys():
    noam = build_schedule({"warmup_steps": 400, "lr_scale": 0.5, "learning_rate": 1.0}, d_model=64)
    assert isinstance(noam, NoamSchedule) and noam.peak() == pytest.approx(0.5 / (64 * 400) ** 0.5)
    constant = build_schedule(
        {"schedule": "constant", "warmup_steps": 0, "lr_scale": 0.5, "learning_rate": 3e-3}, d_model=64
    )
    assert isinstance(constant, ConstantSchedule) and constant.get_config() == {
        "learning_rate": 3e-3,
        "warmup_steps": 0,
    }
    with pytest.raises(ValueError, match="choose one of: noam, constant"):
        build_schedule({"schedule": "cosine", "warmup_steps": 1, "lr_scale": 1, "learning_rate": 1}, 64)
