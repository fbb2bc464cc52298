"""A few bucket widths for a split's lengths, chosen to waste the least padding: a compiled step (XLA,
JAX) is compiled once per batch shape, so `trainer.shape_classes` of them, not one per bucket.

Positions a bucketed epoch computes are about the sum over pairs of the width each pair is padded to
(with a token budget, a batch of width w holds budget // w rows), so the widths that minimise it for
`count` classes are an exact dynamic programme over the distinct lengths (a few dozen on real text).
Measured on 37,000 eng-fra pairs (docs/decisions/shape-classes.md): 6 classes pad 23.0 %
of the positions, 8 classes 19.7 %, against 16.7 % for the 16 fixed widths (27 shapes) of `bucket_widths`.

`trainer.shape_classes: auto` gives a few classes only where the step is compiled: JAX always, TensorFlow
with trainer.jit_compile=true, where the ~27 shapes of the bucket widths cost minutes of compiling (JAX on
tatoeba_small: 3 steps in 3 minutes); TensorFlow's graph step takes a new shape in ~0.1 s and pads less with
them, so it keeps them (docs/decisions/shape-classes.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tx_keras.runtime.compiled_step import step_is_compiled

AUTO = "auto"
COMPILED_CLASSES = 6  # 23.0 % padding on 37k eng-fra pairs, against 16.7 % with 27 shapes


def shape_classes(trainer: Any) -> int | None:
    """The run's batch-shape classes: the configured count, or for `auto` COMPILED_CLASSES when bucketed
    batches meet a compiled step, else None (today's widths). `trainer`: a TrainerConfig
    (training/trainer_config.py)."""
    if trainer.shape_classes != AUTO:
        return trainer.shape_classes
    return COMPILED_CLASSES if step_is_compiled(trainer) and trainer.batching == "bucket" else None


def class_widths(lengths: np.ndarray, count: int) -> np.ndarray:
    """At most `count` widths, ending with the longest length, that minimise the padded positions of
    `lengths` (each length rounded up to the next width)."""
    values, counts = np.unique(lengths, return_counts=True)
    distinct = len(values)
    classes = min(count, distinct)
    pairs_below = np.concatenate([[0], np.cumsum(counts)])  # pairs with a length below values[j]
    # cost[c, j]: least positions of the pairs of the j shortest lengths in c classes; start[c, j]: the
    # first length of the last class there.
    cost = np.full((classes + 1, distinct + 1), np.inf)
    cost[0, 0] = 0.0
    start = np.zeros((classes + 1, distinct + 1), np.int64)
    for c in range(1, classes + 1):
        for j in range(1, distinct + 1):
            options = cost[c - 1, :j] + (pairs_below[j] - pairs_below[:j]) * values[j - 1]
            start[c, j] = int(np.argmin(options))
            cost[c, j] = options[start[c, j]]
    widths, j = [], distinct
    for c in range(classes, 0, -1):
        widths.append(int(values[j - 1]))
        j = int(start[c, j])
    return np.array(sorted(widths), np.int64)
