"""Whether a run's training step is compiled whole by XLA: JAX always, TensorFlow with
`trainer.jit_compile=true`. Batch shapes (data/batching/shape_classes.py) and `precision: auto`
(precision.py) both choose differently for a compiled step."""

from __future__ import annotations

from typing import Any


def step_is_compiled(trainer: Any) -> bool:
    """JAX compiles every step; TensorFlow only when asked (`auto` leaves a CPU's step uncompiled).
    `trainer`: a TrainerConfig (tx_keras/training/trainer_config.py) or anything with its two keys."""
    return trainer.backend == "jax" or trainer.jit_compile is True
