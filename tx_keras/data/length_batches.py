"""Batches of similar-length pairs, so real text (3 to 40 tokens a sentence) is not mostly padding."""

from __future__ import annotations

import numpy as np

_POOL_BATCHES = 64  # pairs are sorted by length within pools of this many batches' worth


def row_lengths(ids: np.ndarray) -> np.ndarray:
    """Tokens per right-padded row (padding is id 0 and only at the end)."""
    return np.count_nonzero(ids, axis=1)


def length_batches(
    lengths: np.ndarray, batch_size: int, batch_tokens: int | None, seed: int | None, epoch: int = 0
) -> list[np.ndarray]:
    """Row indices per batch for one epoch, a pure function of (seed, epoch), so resumed runs replay it.

    Rows are permuted, sorted by length inside pools of about 64 batches (random enough across batches,
    similar within one), cut into batches of `batch_size` rows, or, with `batch_tokens`, of as many rows
    as keep rows x longest length <= batch_tokens (at least one), and the batches are shuffled.
    `seed=None` (evaluation) sorts all rows as one pool and keeps the batches in length order.
    """
    if seed is None:
        return _cut(np.argsort(lengths, kind="stable"), lengths, batch_size, batch_tokens)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    per_batch = batch_size if batch_tokens is None else max(1, batch_tokens // max(1, int(lengths.max())))
    pool = _POOL_BATCHES * per_batch
    batches: list[np.ndarray] = []
    for start in range(0, len(order), pool):
        rows = order[start : start + pool]
        batches += _cut(rows[np.argsort(lengths[rows], kind="stable")], lengths, batch_size, batch_tokens)
    return [batches[i] for i in rng.permutation(len(batches))]


def _cut(
    rows: np.ndarray, lengths: np.ndarray, batch_size: int, batch_tokens: int | None
) -> list[np.ndarray]:
    """Consecutive batches of rows sorted by ascending length."""
    if batch_tokens is None:
        return [rows[i : i + batch_size] for i in range(0, len(rows), batch_size)]
    batches, begin = [], 0
    for end in range(1, len(rows)):  # would adding row `end` (the longest so far) break the budget?
        if (end + 1 - begin) * lengths[rows[end]] > batch_tokens:
            batches.append(rows[begin:end])
            begin = end
    if begin < len(rows):
        batches.append(rows[begin:])
    return batches


def padding_fraction(source: np.ndarray, target: np.ndarray, batches: list[np.ndarray] | None) -> float:
    """The share of padding in the positions the model computes: each batch padded to its longest source
    and target, or with `batches=None` every row padded to the arrays' full widths."""
    source_lengths, target_lengths = row_lengths(source), row_lengths(target)
    real = source_lengths.sum() + target_lengths.sum()
    if batches is None:
        total = source.size + target.size
    else:
        total = sum(len(b) * (source_lengths[b].max() + target_lengths[b].max()) for b in batches)
    return float(1.0 - real / total) if total else 0.0
