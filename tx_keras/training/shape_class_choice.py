"""What `trainer.shape_classes: auto` means for a run: a few batch shapes where the step is compiled.

A compiled step (JAX always; TensorFlow with trainer.jit_compile=true) compiles once per batch shape, so
the ~27 shapes of today's bucket widths cost minutes of compiling (JAX on tatoeba_small: 3 steps in 3
minutes); TensorFlow's graph step takes a new shape in ~0.1 s and pads less with them, so it keeps them
(docs/performance.md, "Compiling the real step").
"""

from __future__ import annotations

from collections.abc import Mapping

from tx_keras.training.compiled_step import step_is_compiled

AUTO = "auto"
COMPILED_CLASSES = 6  # 23.0 % padding on 37k eng-fra pairs, against 16.7 % with 27 shapes (shape_classes.py)


def shape_classes(trainer: Mapping) -> int | None:
    """The run's batch-shape classes: the configured count, or for `auto` COMPILED_CLASSES when bucketed
    batches meet a compiled step, else None (today's widths)."""
    value = trainer.get("shape_classes")
    if value != AUTO:
        return value
    return COMPILED_CLASSES if step_is_compiled(trainer) and trainer.get("batching") == "bucket" else None
