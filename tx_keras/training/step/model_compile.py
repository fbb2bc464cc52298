"""How tx-train compiles a Transformer: its optimizer, schedule, loss and metrics, in one function that
tx-bench's real path calls too (so it times the step users train with, without importing the run hub)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import keras

from tx_keras.training.step.fused_adam import FusedAdam
from tx_keras.training.step.learning_rate import Cooldown, build_schedule
from tx_keras.training.step.masked_accuracy import MaskedAccuracy
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.token_mean_loss import TokenMeanLoss
from tx_keras.training.trainer_config import TrainerConfig

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def compile_model(
    model: Transformer, trainer: TrainerConfig
) -> keras.optimizers.schedules.LearningRateSchedule:
    """Adam(0.9, 0.98, 1e-9) (`FusedAdam`: one kernel per variable on TensorFlow) on `trainer.schedule`
    (Noam or constant), masked loss and accuracy, optional clipping."""
    schedule = build_schedule(trainer, model.d_model)
    optimizer = FusedAdam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9, global_clipnorm=trainer.clip_norm)
    if isinstance(schedule, Cooldown):
        schedule.track_in(optimizer)
    model.compile(
        optimizer=optimizer,
        loss=MaskedCrossEntropy(trainer.label_smoothing),
        metrics=[TokenMeanLoss(trainer.label_smoothing), MaskedAccuracy()],  # "loss": per token, not per row
        jit_compile=trainer.jit_compile,  # "auto" is Keras' choice: XLA on a GPU, off on a CPU; on on JAX
    )
    parts = trainer.step_parts
    model.step_parts = None if parts == "auto" else parts  # None: as the thread pools allow
    return schedule
