"""The learning-rate schedules (training/step/learning_rate.py): trainer.schedule picks one; the constant
schedule's warm-up and serialization."""

import keras
import pytest
from keras import ops

from tx_keras.training.step.learning_rate import ConstantSchedule, NoamSchedule, build_schedule
from tx_keras.training.trainer_config import TrainerConfig
from tx_keras.user_error import ConfigError


def test_noam_is_the_default_and_constant_reads_its_own_keys():
    noam = build_schedule(TrainerConfig(warmup_steps=400, lr_scale=0.5, learning_rate=1.0), d_model=64)
    assert isinstance(noam, NoamSchedule) and noam.peak() == pytest.approx(0.5 / (64 * 400) ** 0.5)
    constant = build_schedule(
        TrainerConfig(schedule="constant", warmup_steps=0, lr_scale=0.5, learning_rate=3e-3), d_model=64
    )
    assert isinstance(constant, ConstantSchedule) and constant.get_config() == {
        "learning_rate": 3e-3,
        "warmup_steps": 0,
    }
    with pytest.raises(
        ConfigError, match="trainer.schedule='cosine' is not allowed; choose one of: noam, constant"
    ):
        TrainerConfig(schedule="cosine")  # the field refuses it before a schedule is built


def _rates(schedule, steps):
    return [float(ops.convert_to_numpy(schedule(step))) for step in steps]


def test_warmup_rises_linearly_then_stays_constant():
    schedule = ConstantSchedule(3e-3, warmup_steps=300)
    rates = _rates(schedule, [0, 149, 299, 300, 5000])
    assert rates == pytest.approx([3e-3 / 300, 3e-3 * 150 / 300, 3e-3, 3e-3, 3e-3])
    assert schedule.peak() == 3e-3


def test_no_warmup_is_the_full_rate_from_the_first_step():
    assert _rates(ConstantSchedule(1e-2, warmup_steps=0), [0, 1, 10_000]) == pytest.approx([1e-2] * 3)


def test_bad_arguments_and_serialization():
    with pytest.raises(ValueError, match="learning_rate=0 must be > 0"):
        ConstantSchedule(0)
    with pytest.raises(ValueError, match="warmup_steps=-1 must be >= 0"):
        ConstantSchedule(1e-3, -1)
    schedule = ConstantSchedule(1e-3, 300)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert isinstance(restored, ConstantSchedule) and restored.get_config() == {
        "learning_rate": 1e-3,
        "warmup_steps": 300,
    }
