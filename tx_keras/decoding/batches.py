"""Running a compiled decoder over a whole split."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf


def decode_in_batches(
    decode: Callable[[tf.Tensor], tf.Tensor], source_ids: np.ndarray, batch_size: int = 256
) -> np.ndarray:
    """Run a decoder over a whole split without holding every sentence in one batch."""
    parts = [
        decode(tf.constant(source_ids[i : i + batch_size], tf.int32)).numpy()
        for i in range(0, len(source_ids), batch_size)
    ]
    return np.concatenate(parts, axis=0)
