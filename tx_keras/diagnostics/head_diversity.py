"""Do several heads look at different things? The mean pairwise Jensen-Shannon divergence between the
heads' attention rows, and the share of heads that attend mostly to one position.

One head that spreads its attention shows up as a low focused share; eight heads that split the work
between them show up as a high divergence (each looks elsewhere) with focused heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FOCUSED = 0.5  # a head is focused when its largest weight averages above this: most of it on one key


@dataclass(frozen=True)
class HeadDiversity:
    """`divergence`: mean Jensen-Shannon divergence in bits over head pairs and real query rows, 0 (the
    heads agree) to 1 (disjoint keys); 0 for a single head, which has no pair. `focused`: the share of
    heads whose largest weight, averaged over the real query rows, is above FOCUSED."""

    divergence: float
    focused: float


def _rows(weights: np.ndarray, query_mask: np.ndarray | None) -> np.ndarray:
    """(B, h, Tq, Tk) -> (R, h, Tk): the rows of the real queries only (padded query rows left out)."""
    rows = np.transpose(weights, (0, 2, 1, 3))  # (B, Tq, h, Tk)
    if query_mask is not None:
        rows = rows[np.asarray(query_mask, bool)]
    return rows.reshape(-1, weights.shape[1], weights.shape[3])


def _plogp(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """p log2(p / q) elementwise, 0 where p is 0 (a masked key has weight 0 in every head and adds 0)."""
    return np.where(p > 0, p * np.log2(np.maximum(p, 1e-30) / np.maximum(q, 1e-30)), 0.0)


def pairwise_divergence(rows: np.ndarray) -> float:
    """Mean Jensen-Shannon divergence (bits) between every pair of heads: rows (R, h, Tk) -> a number."""
    heads = rows.shape[1]
    if heads < 2 or not len(rows):
        return 0.0
    first, second = np.triu_indices(heads, k=1)
    p, q = rows[:, first], rows[:, second]  # (R, pairs, Tk)
    m = (p + q) / 2
    divergence = 0.5 * _plogp(p, m).sum(-1) + 0.5 * _plogp(q, m).sum(-1)
    return float(divergence.mean())


def focused_share(rows: np.ndarray, threshold: float = FOCUSED) -> float:
    """The share of heads whose largest weight, averaged over the rows (R, h, Tk), exceeds `threshold`."""
    if not len(rows):
        return 0.0
    return float((rows.max(axis=-1).mean(axis=0) > threshold).mean())


def head_diversity(weights: np.ndarray, query_mask: np.ndarray | None = None) -> HeadDiversity:
    """Both measures of one layer's weights (B, h, Tq, Tk); `query_mask` (B, Tq) False on padded queries."""
    rows = _rows(np.asarray(weights, dtype="float64"), query_mask)
    return HeadDiversity(pairwise_divergence(rows), focused_share(rows))
