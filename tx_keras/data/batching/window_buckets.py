"""Length-bucketed batches formed a window of rows at a time with tensor ops: the batches tf.data's
`bucket_by_sequence_length` forms from the same rows, in the same order, without its cost per row.

That transformation (with the map and filter that unbatch a tokenized chunk into rows before it) runs a few
tf.data function calls per pair: 5.8-6.4 CPU ms a batch on the Zen 5 EPYC, against 1 ms here, CPU the
training step's two intra-op threads share (docs/corpora.md; in steps a minute the difference stayed inside
the runs' spread). Here each window's rows are assigned to batches at once: a bucket's rows in arrival
order, a batch emitted where its last row arrives, the bucket's incomplete rest carried to the next window,
and flushed, bucket by bucket, at the end of the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

# A window of rows: (source values, source row lengths, target values, target row lengths), int32 / int64.
Rows = tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]


def window_batches(windows: tf.data.Dataset, widths: Sequence[int], sizes: Sequence[int]) -> tf.data.Dataset:
    """`windows` of rows (`Rows`, each row at most `widths[-1]` long) -> `(source, target)` int32 batches:
    rows of bucket i (the first width >= max(source, target) length) in batches of `sizes[i]` rows, both
    sides padded to `widths[i]`, as `bucket_by_sequence_length(..., pad_to_bucket_boundary=True)` gives."""
    widths_t = tf.constant(list(widths), tf.int64)
    sizes_t = tf.constant(list(sizes), tf.int64)
    empty = (tf.zeros([0], tf.int32), tf.zeros([0], tf.int64)) * 2
    ended = windows.map(lambda *rows: (*rows, False)).concatenate(
        tf.data.Dataset.from_tensors((*empty, True))
    )

    def step(carried: Rows, window) -> tuple[Rows, tuple]:
        *rows, last = window
        rows = _concatenated(carried, rows)
        emitted, rest = _assigned(rows, last, widths_t, sizes_t)
        return _taken(rows, rest), emitted

    return ended.scan(empty, step).flat_map(_batches)


def single_rows(windows: tf.data.Dataset) -> tf.data.Dataset:
    """`windows` of rows -> one `(source, target)` element per row (for fixed-size batches)."""

    def rows(source: tf.Tensor, source_lengths: tf.Tensor, target: tf.Tensor, target_lengths: tf.Tensor):
        source_ends, target_ends = tf.cumsum(source_lengths), tf.cumsum(target_lengths)
        bounds = (source_ends - source_lengths, source_ends, target_ends - target_lengths, target_ends)
        return tf.data.Dataset.from_tensor_slices(bounds).map(lambda a, b, c, d: (source[a:b], target[c:d]))

    return windows.flat_map(rows)


def _concatenated(first: Rows, second: Rows) -> Rows:
    return tuple(tf.concat([a, b], 0) for a, b in zip(first, second, strict=True))


def _ragged(values: tf.Tensor, lengths: tf.Tensor) -> tf.RaggedTensor:
    return tf.RaggedTensor.from_row_lengths(values, lengths, validate=False)


def _taken(rows: Rows, indices: tf.Tensor) -> Rows:
    """The rows at `indices`, in that order."""
    source = tf.gather(_ragged(rows[0], rows[1]), indices)
    target = tf.gather(_ragged(rows[2], rows[3]), indices)
    return source.flat_values, source.row_lengths(), target.flat_values, target.row_lengths()


def _assigned(rows: Rows, last: tf.Tensor, widths: tf.Tensor, sizes: tf.Tensor) -> tuple[tuple, tf.Tensor]:
    """(the batches complete among `rows` (all of them when `last`) as (rows in batch order, rows per batch,
    width per batch), the indices of the rest in arrival order)."""
    buckets = int(widths.shape[0])
    keys = tf.maximum(rows[1], rows[3])
    # A row's bucket: the first width at or above its length.
    bucket = tf.searchsorted(widths, keys, side="left", out_type=tf.int64)
    one_hot = tf.one_hot(bucket, buckets, dtype=tf.int64)
    rank = tf.reduce_sum(tf.cumsum(one_hot, axis=0) * one_hot, axis=1) - 1  # place in its bucket's queue
    row_size = tf.gather(sizes, bucket)
    batch_in_bucket = rank // row_size
    in_bucket = tf.reduce_sum(one_hot, axis=0)  # rows per bucket
    full = in_bucket // sizes  # complete batches per bucket
    complete_batches = tf.reduce_sum(full)
    complete = batch_in_bucket < tf.gather(full, bucket)
    # A complete batch is emitted where its last row arrives: the batches numbered in that order.
    closing = tf.logical_and(complete, rank % row_size == row_size - 1)
    number = tf.cumsum(tf.cast(closing, tf.int64)) - 1
    slots = tf.stack([bucket, batch_in_bucket], axis=1)
    columns = tf.reduce_max(tf.concat([batch_in_bucket, [0]], 0)) + 1
    table = tf.scatter_nd(
        tf.boolean_mask(slots, closing), tf.boolean_mask(number, closing), tf.stack([buckets, columns])
    )
    numbered = tf.gather_nd(table, slots)
    # At the end, each bucket's incomplete rest is one more batch, after the complete ones, bucket by bucket.
    partial = in_bucket > full * sizes
    flushed = complete_batches + tf.cumsum(tf.cast(partial, tf.int64)) - 1
    order = tf.where(complete, numbered, tf.gather(flushed, bucket))
    emitted = tf.logical_or(complete, last)
    indices = tf.boolean_mask(tf.range(tf.size(keys, out_type=tf.int64)), emitted)
    order = tf.boolean_mask(order, emitted)
    batches = complete_batches + tf.where(last, tf.reduce_sum(tf.cast(partial, tf.int64)), 0)
    in_order = tf.gather(indices, tf.argsort(order, stable=True))
    counts = tf.math.bincount(order, minlength=batches, maxlength=batches, dtype=tf.int64)
    width = tf.gather(widths, tf.math.unsorted_segment_max(tf.boolean_mask(bucket, emitted), order, batches))
    rest = tf.where(tf.logical_not(emitted))[:, 0]
    return (*_taken(rows, in_order), counts, width), rest


def _batches(values, lengths, target_values, target_lengths, counts, widths) -> tf.data.Dataset:
    """A window's emitted batches, one element each, padded to their bucket's width."""
    ends = tf.cumsum(counts)

    def batch(start: tf.Tensor, end: tf.Tensor, width: tf.Tensor):
        source = _ragged(values, lengths)[start:end].to_tensor()
        target = _ragged(target_values, target_lengths)[start:end].to_tensor()
        return _padded(source, width), _padded(target, width)

    return tf.data.Dataset.from_tensor_slices((ends - counts, ends, widths)).map(batch)


def _padded(rows: tf.Tensor, width: tf.Tensor) -> tf.Tensor:
    return tf.pad(rows, [[0, 0], [0, width - tf.shape(rows, out_type=tf.int64)[1]]])
