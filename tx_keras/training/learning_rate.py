"""The learning-rate schedule a run uses, chosen by `trainer.schedule`."""

from __future__ import annotations

from collections.abc import Mapping

import keras

from tx_keras.training.constant_schedule import ConstantSchedule
from tx_keras.training.cooldown import Cooldown
from tx_keras.training.schedule import NoamSchedule

# `trainer.schedule`: the paper's warm-up + inverse-sqrt decay, or a constant rate after a linear warm-up.
SCHEDULES = ("noam", "constant")


def build_schedule(trainer: Mapping, d_model: int) -> keras.optimizers.schedules.LearningRateSchedule:
    """Noam from `warmup_steps` and `lr_scale` (the default when `schedule` is absent), or constant from
    `learning_rate` and `warmup_steps` (0 allowed); wrapped in a `Cooldown` when `cooldown` > 0."""
    kind = trainer.get("schedule", "noam")
    if kind == "noam":
        schedule = NoamSchedule(d_model, trainer["warmup_steps"], trainer["lr_scale"])
    elif kind == "constant":
        schedule = ConstantSchedule(trainer["learning_rate"], trainer["warmup_steps"])
    else:
        raise ValueError(f"trainer.schedule={kind!r} is unknown; choose one of: {', '.join(SCHEDULES)}")
    cooldown = trainer.get("cooldown", 0.0)
    return Cooldown(schedule, cooldown) if cooldown else schedule
