"""How far a layer's token vectors are from all being the same vector (Dong et al. 2021, arXiv:2103.03404)."""

from __future__ import annotations

import numpy as np


def _norm_1_inf(matrix: np.ndarray) -> float:
    """||X||_{1,inf} = sqrt(||X||_1 * ||X||_inf): max column abs-sum times max row abs-sum, square-rooted."""
    magnitudes = np.abs(matrix)
    return float(np.sqrt(magnitudes.sum(axis=0).max() * magnitudes.sum(axis=1).max()))


def rank_collapse_ratio(hidden: np.ndarray, mask: np.ndarray | None = None) -> float:
    """r = ||H - 1 mu^T||_{1,inf} / ||H||_{1,inf} for a layer output H (T x d), mu the token mean.

    Pure attention without skips drives every token to the same vector (rank 1), so r -> 0; residual
    connections keep r away from 0. `hidden` may be (T, d) or a batch (B, T, d) with a (B, T) `mask` of
    real tokens; a batch gives the mean ratio over its sentences.
    """
    hidden = np.asarray(hidden, dtype="float64")
    if hidden.ndim == 2:
        hidden = hidden[None]
    mask = np.ones(hidden.shape[:2], bool) if mask is None else np.asarray(mask, bool)
    ratios = []
    for sentence, real in zip(hidden, mask, strict=True):
        tokens = sentence[real]
        denominator = _norm_1_inf(tokens)
        if denominator > 0:
            ratios.append(_norm_1_inf(tokens - tokens.mean(axis=0, keepdims=True)) / denominator)
    return float(np.mean(ratios)) if ratios else float("nan")
