"""Decode a whole split in length-sorted batches: fast over thousands of sentences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from keras import ops

from tx_keras.data.batching.length_batches import row_lengths


def decode_sorted(decode: Callable, source_ids: np.ndarray, batch_size: int = 512) -> np.ndarray:
    """`decode` over every row of `source_ids` (N, Ts) -> (N, max_length) ids in the original order.

    Rows are sorted by source length and cut into batches of `batch_size` sentences, each trimmed to its
    longest source: a batch then neither encodes padding columns nor keeps stepping for one long
    sentence while the short ones are done (the decoders stop when every row of a batch has emitted EOS).
    The padding masks make the trimmed columns invisible, so each row decodes as it would alone.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be >= 1")
    source_ids = np.asarray(source_ids, dtype=np.int32)
    lengths = row_lengths(source_ids)
    order = np.argsort(lengths, kind="stable")
    parts = []
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = max(int(lengths[rows].max()), 1)
        parts.append(ops.convert_to_numpy(decode(source_ids[rows, :width])))
    if not parts:
        return np.zeros((0, 0), np.int32)
    decoded = np.concatenate(parts, axis=0)
    restored = np.empty_like(decoded)
    restored[order] = decoded
    return restored
