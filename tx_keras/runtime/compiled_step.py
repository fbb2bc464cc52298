"""Whether a run's training step is compiled whole by XLA: JAX always, TensorFlow with
`trainer.jit_compile=true`. Batch shapes (data/batching/shape_classes.py) and `precision: auto` (precision.py)
both choose differently for a compiled step."""

from __future__ import annotations

from collections.abc import Mapping


def step_is_compiled(trainer: Mapping) -> bool:
    """JAX compiles every step; TensorFlow only when asked (`auto` leaves a CPU's step uncompiled)."""
    return trainer.get("backend") == "jax" or trainer.get("jit_compile") is True
