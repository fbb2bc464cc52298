"""Running a compiled decoder over a whole split."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from keras import ops


def decode_in_batches(decode: Callable, source_ids: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """Run a decoder over a whole split without holding every sentence in one batch."""
    source_ids = np.asarray(source_ids, np.int32)
    starts = range(0, len(source_ids), batch_size)
    parts = [ops.convert_to_numpy(decode(source_ids[i : i + batch_size])) for i in starts]
    return np.concatenate(parts, axis=0)
