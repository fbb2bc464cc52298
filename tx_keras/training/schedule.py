"""The paper's learning-rate schedule: linear warm-up, then inverse square-root decay."""

from __future__ import annotations

import keras
from keras import ops


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
