"""Per-head attention entropy: low = a head looks at one word, high (log T) = it spreads evenly."""

from __future__ import annotations

import numpy as np


def attention_entropy(weights: np.ndarray, query_mask: np.ndarray | None = None) -> np.ndarray:
    """Mean entropy in nats of each head's attention rows: weights (B, h, Tq, Tk) -> (h,).

    Padded query rows (`query_mask` (B, Tq) False) are left out; masked keys have weight 0 and add 0.
    """
    weights = np.asarray(weights, dtype="float64")
    row_entropy = -np.sum(np.where(weights > 0, weights * np.log(np.maximum(weights, 1e-30)), 0.0), axis=-1)
    if query_mask is None:
        return row_entropy.mean(axis=(0, 2))
    rows = np.asarray(query_mask, bool)[:, None, :]
    return (row_entropy * rows).sum(axis=(0, 2)) / np.maximum(rows.sum(axis=(0, 2)), 1)
