"""A linear cool-down to zero at the end of training, wrapped around any schedule.

A run stopped by a time budget otherwise ends at whatever rate its schedule has reached (Noam: still
half its peak after four epochs), with the weights bouncing around the minimum. Decaying the rate to zero
over the last part of the budget ("budget-aware" schedules, Li et al. 2020; the cool-down of
warm-up-stable-decay schedules, Hägele et al. 2024) settles them, and it needs no knowledge of how many
steps the host will manage: the factor follows the clock.
"""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="tx_keras")
class Cooldown(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = schedule(step) * factor, where `factor` is a variable that `CooldownClock` lowers from
    1 to 0 over the last `fraction` of training (of the time budget, or of the planned steps).

    The factor is state of the run, not of the schedule's config: a reloaded schedule starts at 1.
    """

    def __init__(self, schedule: keras.optimizers.schedules.LearningRateSchedule, fraction: float):
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction={fraction} must be in (0, 1]")
        self.schedule = schedule
        self.fraction = fraction
        self.factor = keras.Variable(1.0, dtype="float32", trainable=False, name="cooldown_factor")

    def __call__(self, step):
        return self.schedule(step) * self.factor

    def set_progress(self, progress: float) -> None:
        """`progress` = share of training done (0..1): the factor is 1 until 1 - fraction, then falls
        linearly to 0 at 1."""
        self.factor.assign(min(1.0, max(0.0, (1.0 - progress) / self.fraction)))

    def peak(self) -> float:
        """The largest learning rate: the wrapped schedule's (the cool-down only lowers it)."""
        return self.schedule.peak()

    def get_config(self) -> dict:
        return {"schedule": keras.saving.serialize_keras_object(self.schedule), "fraction": self.fraction}

    @classmethod
    def from_config(cls, config: dict) -> Cooldown:
        schedule = keras.saving.deserialize_keras_object(config["schedule"])
        return cls(schedule, config["fraction"])
