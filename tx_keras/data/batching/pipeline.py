"""tf.data input pipeline for teacher-forced seq2seq training."""

from typing import Any

import numpy as np
import tensorflow as tf

from tx_keras.data.batching.autotune_thread import without_autotune_thread
from tx_keras.data.batching.batch_request import BatchRequest
from tx_keras.data.batching.batch_skip import skip_batches
from tx_keras.data.batching.length_batches import (
    batch_width,
    computed_rows,
    epoch_widths,
    length_batches,
    row_lengths,
)
from tx_keras.data.batching.row_padding import with_padding_rows


def make_dataset(*args: Any, **kwargs: Any) -> tf.data.Dataset:
    """Yield `((source, decoder_input), labels)` int32 batches; the arguments are BatchRequest's
    (`source, target, batch_size, shuffle`, then the options by name).

    `decoder_input = target[:, :-1]` (starts with SOS) and `labels = target[:, 1:]` (ends with EOS/PAD),
    so position t of the decoder predicts token t+1. When shuffling, the order is a full permutation drawn
    from `(seed, epoch)` alone, read each time an iteration starts: the trainer sets the `epoch` variable
    at every epoch's start (callbacks.EpochVariable), so a run resumed at epoch k sees exactly the order
    an uninterrupted run sees at epoch k (a `reshuffle_each_iteration` shuffle would restart at epoch 0's).

    `batching="bucket"` batches pairs of similar length (`length_batches`, optionally by a token budget)
    and cuts each batch to its bucket's width: a few fixed shapes, not a new one every step;
    `shape_classes=N` makes them N (N widths chosen for the lengths, each batch padded to its width's rows
    by rows that count no token: data/batching/row_padding.py), so a compiled step is compiled only N times.

    `skip` (shuffled data only): batches at the start of an epoch to leave out, read as each iteration
    starts; a run resumed in the middle of an epoch sets it for that epoch, then back to 0. The bucketed
    plan leaves them out itself; fixed batches go through data.batching.batch_skip.skip_batches.
    """
    request = BatchRequest(*args, **kwargs)
    source, target, batch_size, shuffle = request.source, request.target, request.batch_size, request.shuffle
    seed, epoch, skip, drop_remainder = request.seed, request.epoch, request.skip, request.drop_remainder
    if request.batching == "bucket":
        return without_autotune_thread(_bucketed(request))
    if not shuffle:
        dataset = tf.data.Dataset.from_tensor_slices(((source, target[:, :-1]), target[:, 1:])).cache()
        dataset = dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)
        return without_autotune_thread(dataset)
    rows = len(source)
    encoder, decoder, labels = tf.constant(source), tf.constant(target[:, :-1]), tf.constant(target[:, 1:])

    def order(_) -> tf.Tensor:
        key = tf.stack([tf.constant(seed, tf.int64), tf.cast(tf.convert_to_tensor(epoch), tf.int64)])
        return tf.argsort(tf.random.stateless_uniform([rows], seed=key))

    def gather(indices: tf.Tensor):
        return (tf.gather(encoder, indices), tf.gather(decoder, indices)), tf.gather(labels, indices)

    indices = tf.data.Dataset.from_tensors(0).map(order).unbatch()
    # Parallel and deterministic (the order stays the seeded one); prefetch overlaps it with the step.
    dataset = indices.batch(batch_size, drop_remainder=drop_remainder).map(
        gather, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
    )
    dataset = dataset.prefetch(tf.data.AUTOTUNE)
    return without_autotune_thread(dataset if skip is None else skip_batches(dataset, skip))


def _bucketed(request: BatchRequest) -> tf.data.Dataset:
    source, target, batch_size, batch_tokens = (
        request.source,
        request.target,
        request.batch_size,
        request.batch_tokens,
    )
    seed, epoch, skip, classes = request.seed, request.epoch, request.skip, request.shape_classes
    shuffle = request.shuffle
    lengths = np.maximum(row_lengths(source), row_lengths(target))
    widths = epoch_widths(lengths, classes)

    def plan(current: tf.Tensor, skipped: tf.Tensor) -> tuple[np.ndarray, ...]:
        """Epoch `current`'s batches after the first `skipped` as one flat row list, its batch boundaries,
        each batch's width and the rows the model computes for it (`computed_rows`)."""
        seeded = seed if shuffle else None
        batches = length_batches(lengths, batch_size, batch_tokens, seeded, int(current), classes)
        batches = batches[int(skipped) :]
        rows = np.concatenate([np.zeros(0, np.int64), *batches]).astype(np.int64)
        bounds = np.cumsum([0] + [len(b) for b in batches], dtype=np.int64)
        batch_widths = [int(batch_width(lengths[b].max(), widths)) for b in batches]
        counts = [
            computed_rows(b, w, batch_size, batch_tokens, classes)
            for b, w in zip(batches, batch_widths, strict=True)
        ]
        return rows, bounds, np.array(batch_widths, np.int64), np.array(counts, np.int64)

    def epoch_plan(_):
        """Runs each time an iteration starts, so it reads the epoch the trainer has just set."""
        current = tf.convert_to_tensor(epoch)
        skipped = tf.convert_to_tensor(0 if skip is None else skip, tf.int64)
        rows, bounds, batch_widths, counts = tf.py_function(plan, [current, skipped], [tf.int64] * 4)
        for planned in (rows, bounds, batch_widths, counts):
            planned.set_shape([None])
        return tf.RaggedTensor.from_row_splits(rows, bounds, validate=False), batch_widths, counts

    encoder, decoder_target = tf.constant(source), tf.constant(target)

    def gather(indices: tf.Tensor, width: tf.Tensor, count: tf.Tensor):
        """The rows, both sides cut to the batch's bucket width (or their full width when narrower), and
        padding rows up to `count` rows (shape classes: the width's full row count)."""
        rows_source, rows_target = tf.gather(encoder, indices), tf.gather(decoder_target, indices)
        rows_source, rows_target = rows_source[:, :width], rows_target[:, :width]
        batch = (rows_source, rows_target[:, :-1]), rows_target[:, 1:]
        if classes is None:
            return batch
        return with_padding_rows(*batch, tf.cast(count, tf.int32) - tf.shape(indices)[0])

    # Not Dataset.from_generator: TensorFlow's generator dataset sets glibc's M_TRIM_THRESHOLD to 128 KiB
    # for the whole process, which also freezes malloc's mmap threshold there, so every tensor above
    # 128 KiB was mmapped and faulted in anew each step (docs/decisions/allocator-bfc-pool.md).
    batches = tf.data.Dataset.from_tensors(0).map(epoch_plan).unbatch()
    return batches.map(gather, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(
        tf.data.AUTOTUNE
    )
