"""Rows that count no token, added to a batch so it has the rows a step expects (a shape class's full
count, or a multiple of the data-parallel replicas) without changing what the step learns.

Their labels are all padding (id 0): the masked loss and metrics count no token of them, so the step's
loss, gradient and reported figures are those of the real rows. Their inputs repeat the batch's first row,
so the forward pass stays finite (an all-padding source row is a fully masked attention row).
"""

from __future__ import annotations

import tensorflow as tf


def with_padding_rows(inputs, labels: tf.Tensor, extra: tf.Tensor):
    """`((source, decoder_input), labels)` with `extra` padding rows appended."""
    repeat = tf.zeros([extra], tf.int32)  # index of the batch's first row, `extra` times

    def grow(tensor: tf.Tensor) -> tf.Tensor:
        return tf.concat([tensor, tf.gather(tensor, repeat)], axis=0)

    no_tokens = tf.zeros([extra, tf.shape(labels)[1]], labels.dtype)
    return tuple(grow(tensor) for tensor in inputs), tf.concat([labels, no_tokens], axis=0)
