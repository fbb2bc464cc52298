"""What an input pipeline is asked for: the rows, the batch size and the batching, the order's seed and the
trainer's epoch and skip counters. Stated and checked once for both pipelines (tf.data: pipeline.py; numpy
batches without TensorFlow: numpy_batches.py), which must give the same batches for the same request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tx_keras.data.batching import BATCHING


@dataclass(frozen=True)
class BatchRequest:
    """`((source, decoder_input), labels)` batches of `source` and `target` rows (int32, padded).

    `epoch` and `skip` are an int or a variable the trainer sets as each epoch starts (the epoch's order;
    the batches a resumed epoch leaves out, shuffled data only). `batching`: one of BATCHING; `batch_tokens`:
    a bucketed batch's token budget; `shape_classes`: N batch widths instead of one a bucket.
    """

    source: np.ndarray
    target: np.ndarray
    batch_size: int
    shuffle: bool
    seed: int = 0
    drop_remainder: bool = False
    epoch: Any = 0
    batching: str = "fixed"
    batch_tokens: int | None = None
    skip: Any = None
    shape_classes: int | None = None

    def __post_init__(self) -> None:
        source, target = np.asarray(self.source, dtype=np.int32), np.asarray(self.target, dtype=np.int32)
        if source.ndim != 2 or target.ndim != 2 or len(source) != len(target):
            raise ValueError(f"need 2-D source/target with equal rows, got {source.shape} and {target.shape}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size={self.batch_size} must be >= 1")
        if self.batching not in BATCHING:
            raise ValueError(f"batching={self.batching!r}; choose one of: {', '.join(BATCHING)}")
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "target", target)
