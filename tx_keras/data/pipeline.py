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
) -> tf.data.Dataset:
    """Yield `((source, decoder_input), labels)` int32 batches.

    `decoder_input = target[:, :-1]` (starts with SOS) and `labels = target[:, 1:]` (ends with EOS/PAD),
    so position t of the decoder predicts token t+1. The whole split is cached and, when shuffling, the
    buffer spans all rows so every epoch is a full, seeded reshuffle.
    """
    source = np.asarray(source, dtype=np.int32)
    target = np.asarray(target, dtype=np.int32)
    if source.ndim != 2 or target.ndim != 2 or len(source) != len(target):
        raise ValueError(f"need 2-D source/target with equal rows, got {source.shape} and {target.shape}")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be >= 1")
    dataset = tf.data.Dataset.from_tensor_slices(((source, target[:, :-1]), target[:, 1:])).cache()
    if shuffle:
        dataset = dataset.shuffle(max(len(source), 1), seed=seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)
