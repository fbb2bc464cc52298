"""A constant learning rate after an optional linear warm-up: the schedule of the norm claim's grid
(Xiong et al. 2020 compare post-LN and pre-LN at fixed learning rates with and without warm-up)."""

from __future__ import annotations

import keras
from keras import ops


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
