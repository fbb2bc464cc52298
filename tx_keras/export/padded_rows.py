"""Ragged token rows -> one padded (B, width) tensor with EOS after each row, as training rows are."""

from __future__ import annotations

import tensorflow as tf


def padded_with_eos(rows: tf.RaggedTensor, eos, pad, width: int) -> tf.Tensor:
    """`rows` (each at most `width - 1` long) padded to `width`, with `eos` right after each row's end.

    Written on the padded tensor instead of `tf.concat` of ragged rows on axis 1: RaggedConcat transposes
    int64 row indices, and TensorFlow's oneDNN transpose then prints a spurious error line ("oneDNN
    supports DT_INT64 only on platforms with AVX-512") on the stderr of every tx-translate on AVX-512 CPUs.
    """
    dense = rows.to_tensor(pad, shape=[None, width])
    ends = tf.cast(rows.row_lengths(), tf.int32)[:, None]
    return tf.where(tf.range(width)[None, :] == ends, tf.constant(eos, dense.dtype), dense)
