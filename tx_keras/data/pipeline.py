"""tf.data input pipeline for teacher-forced seq2seq training."""

import numpy as np
import tensorflow as tf


def make_dataset(
    source: np.ndarray,
    target: np.ndarray,
    batch_size: int,
    shuffle: bool,
    seed: int = 0,
    drop_remainder: bool = False,
    epoch: tf.Variable | int = 0,
) -> tf.data.Dataset:
    """Yield `((source, decoder_input), labels)` int32 batches.

    `decoder_input = target[:, :-1]` (starts with SOS) and `labels = target[:, 1:]` (ends with EOS/PAD),
    so position t of the decoder predicts token t+1. When shuffling, the order is a full permutation drawn
    from `(seed, epoch)` alone, read each time an iteration starts: the trainer sets the `epoch` variable
    at every epoch's start (callbacks.EpochVariable), so a run resumed at epoch k sees exactly the order
    an uninterrupted run sees at epoch k (a `reshuffle_each_iteration` shuffle would restart at epoch 0's).
    """
    source = np.asarray(source, dtype=np.int32)
    target = np.asarray(target, dtype=np.int32)
    if source.ndim != 2 or target.ndim != 2 or len(source) != len(target):
        raise ValueError(f"need 2-D source/target with equal rows, got {source.shape} and {target.shape}")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be >= 1")
    if not shuffle:
        dataset = tf.data.Dataset.from_tensor_slices(((source, target[:, :-1]), target[:, 1:])).cache()
        return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)
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
    return dataset.prefetch(tf.data.AUTOTUNE)
