"""The learning rate of a run, chosen by `trainer.schedule`: every schedule, and the cool-down around them.

- `NoamSchedule`: the paper's linear warm-up, then inverse square-root decay.
- `ConstantSchedule`: a constant rate after an optional linear warm-up, the schedule of the norm claim's
  grid (Xiong et al. 2020 compare post-LN and pre-LN at fixed learning rates with and without warm-up).
- `Cooldown`: a linear decay to zero over the end of training, wrapped around either. A run stopped by a
  time budget otherwise ends at whatever rate its schedule has reached (Noam: still half its peak after
  four epochs), with the weights bouncing around the minimum. Decaying the rate to zero over the last part
  of the budget ("budget-aware" schedules, Li et al. 2020; the cool-down of warm-up-stable-decay
  schedules, Hägele et al. 2024) settles them, and it needs no knowledge of how many steps the host will
  manage: the factor follows the clock (callbacks/cooldown_clock.py ticks it).

Keras serializes them by registered name (`tx_keras>NoamSchedule` ...), so model files stay loadable.
"""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.training.trainer_config import TrainerConfig


@keras.saving.register_keras_serializable(package="tx_keras")
class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).

    Warm-up matters for post-LN Transformers: large early updates through un-normalised residual
    paths blow up; `scale` lets small models and short runs use a larger peak than the paper.
    """

    def __init__(self, d_model: int, warmup_steps: int = 4000, scale: float = 1.0):
        if warmup_steps < 1:
            raise ValueError(f"warmup_steps={warmup_steps} must be >= 1")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = scale

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0  # Keras counts from 0; the formula from 1
        decay = ops.minimum(ops.rsqrt(step), step * self.warmup_steps**-1.5)
        return self.scale * self.d_model**-0.5 * decay

    def peak(self) -> float:
        """The largest learning rate, reached at the end of warm-up."""
        return self.scale * (self.d_model * self.warmup_steps) ** -0.5

    def get_config(self) -> dict:
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale}


@keras.saving.register_keras_serializable(package="tx_keras")
class ConstantSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = learning_rate * min(1, step / warmup_steps), counting steps from 1; warmup_steps=0 is
    the full rate from the first step.

    Unlike the Noam schedule there is no decay, so the learning rate and the warm-up can be varied
    independently of each other and of d_model.
    """

    def __init__(self, learning_rate: float, warmup_steps: int = 0):
        if learning_rate <= 0:
            raise ValueError(f"learning_rate={learning_rate} must be > 0")
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps={warmup_steps} must be >= 0")
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        if not self.warmup_steps:
            return ops.convert_to_tensor(self.learning_rate, "float32")
        step = ops.cast(step, "float32") + 1.0  # Keras counts from 0
        return self.learning_rate * ops.minimum(1.0, step / self.warmup_steps)

    def peak(self) -> float:
        """The largest learning rate: the constant itself."""
        return self.learning_rate

    def get_config(self) -> dict:
        return {"learning_rate": self.learning_rate, "warmup_steps": self.warmup_steps}


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

    def track_in(self, optimizer: keras.optimizers.Optimizer) -> None:
        """Make the factor one of `optimizer`'s variables. On JAX a compiled step reads only the state it
        is given (model, optimizer, metrics): a variable outside it would be baked in as a constant when the
        step is traced, and the cool-down would never start. Checkpoints then carry it too."""
        self.factor = optimizer.add_variable((), initializer="ones", dtype="float32", name="cooldown_factor")

    def factor_at(self, progress: float) -> float:
        """The factor at `progress` = share of training done (0..1): 1 until 1 - fraction, then falling
        linearly to 0 at 1."""
        return min(1.0, max(0.0, (1.0 - progress) / self.fraction))

    def peak(self) -> float:
        """The largest learning rate: the wrapped schedule's (the cool-down only lowers it)."""
        return self.schedule.peak()

    def get_config(self) -> dict:
        return {"schedule": keras.saving.serialize_keras_object(self.schedule), "fraction": self.fraction}

    @classmethod
    def from_config(cls, config: dict) -> Cooldown:
        schedule = keras.saving.deserialize_keras_object(config["schedule"])
        return cls(schedule, config["fraction"])


def build_schedule(trainer: TrainerConfig, d_model: int) -> keras.optimizers.schedules.LearningRateSchedule:
    """Noam from `warmup_steps` and `lr_scale`, or constant from `learning_rate` and `warmup_steps` (0
    allowed); wrapped in a `Cooldown` when `cooldown` > 0."""
    if trainer.schedule == "noam":
        schedule = NoamSchedule(d_model, trainer.warmup_steps, trainer.lr_scale)
    else:  # constant: the field allows no other (trainer_config.py)
        schedule = ConstantSchedule(trainer.learning_rate, trainer.warmup_steps)
    return Cooldown(schedule, trainer.cooldown) if trainer.cooldown else schedule
