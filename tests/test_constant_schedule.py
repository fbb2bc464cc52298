"""The constant learning rate with an optional linear warm-up."""

import keras
import pytest
from keras import ops

from tx_keras.training.constant_schedule import ConstantSchedule


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
