"""Batches of similar-length pairs, so real text (3 to 40 tokens a sentence) is not mostly padding.

Every batch has one of a few fixed shapes: lengths are rounded up to a bucket width (`bucket_widths`) and a
bucket's batches all have the same number of rows (the token budget over the width), so an epoch holds at
most two shapes per bucket (full batches and the bucket's last one): 27 shapes in a tatoeba_small epoch
instead of 136 when each batch was cut to its own longest pair, at the same padding (16.7 % vs 16.6 %).
Buffers then come back in a few sizes, which the allocator can reuse (docs/decisions/allocator-bfc-pool.md).

A compiled step (XLA, JAX) is compiled once per shape, so `classes=N` goes further: N widths chosen for
the split's lengths (shape_classes.py), and every batch of a width given the width's full row count,
the bucket's last batch padded by rows that count no token (`computed_rows`; the pipeline adds them
with data/batching/row_padding.py): N shapes an epoch (docs/decisions/shape-classes.md).
"""

from __future__ import annotations

import numpy as np

from tx_keras.data.batching.shape_classes import class_widths

_SMALLEST_WIDTH = 4  # bucket widths start here; shorter pairs pad up to it


def row_lengths(ids: np.ndarray) -> np.ndarray:
    """Tokens per right-padded row (padding is id 0 and only at the end)."""
    return np.count_nonzero(ids, axis=1)


def bucket_widths(longest: int) -> np.ndarray:
    """Padded widths 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, ... up to and ending with `longest`.

    The step is a quarter of the power of two at or below the width (at least 2), so rounding up adds at
    most ~25 % to a pair and ~8 % on Tatoeba overall, while 40-token pairs need only 15 widths.
    """
    widths = [_SMALLEST_WIDTH]
    while widths[-1] < longest:
        width = widths[-1]
        widths.append(width + max(2, (1 << (width.bit_length() - 1)) // 4))
    return np.array([w for w in widths if w < longest] + [max(1, longest)], dtype=np.int64)


def epoch_widths(lengths: np.ndarray, classes: int | None) -> np.ndarray:
    """The bucket widths of a split: `bucket_widths` of its longest pair, or `classes` widths chosen for
    its lengths (`class_widths`)."""
    if not len(lengths):
        return np.ones(1, np.int64)
    return bucket_widths(int(lengths.max())) if classes is None else class_widths(lengths, classes)


def full_rows(width: int, batch_size: int, batch_tokens: int | None) -> int:
    """Rows of a full batch of bucket `width`: `batch_size`, or batch_tokens // width (at least one)."""
    return batch_size if batch_tokens is None else max(1, batch_tokens // int(width))


def computed_rows(
    rows: np.ndarray, width: int, batch_size: int, batch_tokens: int | None, classes: int | None
) -> int:
    """Rows the model computes for a batch of real `rows` in bucket `width`: the real ones, or with
    shape `classes` the width's full row count (the rest are padding rows that count no token)."""
    return len(rows) if classes is None else full_rows(width, batch_size, batch_tokens)


def batch_width(lengths: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The bucket width each length rounds up to."""
    return widths[np.searchsorted(widths, lengths)]


def length_batches(
    lengths: np.ndarray,
    batch_size: int,
    batch_tokens: int | None,
    seed: int | None,
    epoch: int = 0,
    classes: int | None = None,
) -> list[np.ndarray]:
    """Real row indices per batch for one epoch, a pure function of (seed, epoch), so resumed runs replay
    it.

    Rows are permuted, grouped by bucket width (`epoch_widths`) in that random order, cut into batches of
    `batch_size` rows, or, with `batch_tokens`, of batch_tokens // width rows (at least one), and the batches
    are shuffled. `seed=None` (evaluation) takes rows in length order and keeps the batches in that order.
    """
    if len(lengths) == 0:
        return []
    widths = epoch_widths(lengths, classes)
    width = batch_width(lengths, widths)
    if seed is None:
        order = np.argsort(lengths, kind="stable")
    else:
        rng = np.random.default_rng([seed, epoch])
        order = rng.permutation(len(lengths))
    batches: list[np.ndarray] = []
    for bucket in widths:
        rows = order[width[order] == bucket]
        per_batch = full_rows(int(bucket), batch_size, batch_tokens)
        batches += [rows[i : i + per_batch] for i in range(0, len(rows), per_batch)]
    if seed is None:
        return batches
    return [batches[i] for i in rng.permutation(len(batches))]


def padding_fraction(
    source: np.ndarray,
    target: np.ndarray,
    batches: list[np.ndarray] | None,
    batch_size: int = 0,
    batch_tokens: int | None = None,
    classes: int | None = None,
) -> float:
    """The share of padding in the positions the model computes: each batch padded to its bucket width
    (capped at each side's full width) and, with shape `classes`, to the width's full rows
    (`computed_rows`), or with `batches=None` every row padded to the arrays' full widths."""
    source_lengths, target_lengths = row_lengths(source), row_lengths(target)
    real = source_lengths.sum() + target_lengths.sum()
    if batches is None:
        total = source.size + target.size
    else:
        lengths = np.maximum(source_lengths, target_lengths)
        widths = epoch_widths(lengths, classes)
        total = 0
        for rows in batches:
            width = int(batch_width(lengths[rows].max(), widths))
            count = computed_rows(rows, width, batch_size, batch_tokens, classes)
            total += count * (min(width, source.shape[1]) + min(width, target.shape[1]))
    return float(1.0 - real / total) if total else 0.0
