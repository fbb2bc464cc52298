"""The learning-rate schedule a run uses, chosen by `trainer.schedule`."""

from __future__ import annotations

from collections.abc import Mapping

import keras

from tx_keras.training.constant_schedule import ConstantSchedule
from tx_keras.training.schedule import NoamSchedule

# `trainer.schedule`: the paper's warm-up + inverse-sqrt decay, or a constant rate after a linear warm-up.
SCHEDULES = ("noam", "constant")


def build_schedule(trainer: Mapping, d_model: int) -> keras.optimizers.schedules.LearningRateSchedule:
    """Noam from `warmup_steps` and `lr_scale` (the default when `schedule` is absent), or constant from
    `learning_rate` and `warmup_steps` (0 allowed)."""
    kind = trainer.get("schedule", "noam")
    if kind == "noam":
        return NoamSchedule(d_model, trainer["warmup_steps"], trainer["lr_scale"])
    if kind == "constant":
        return ConstantSchedule(trainer["learning_rate"], trainer["warmup_steps"])
    raise ValueError(f"trainer.schedule={kind!r} is unknown; choose one of: {', '.join(SCHEDULES)}")
