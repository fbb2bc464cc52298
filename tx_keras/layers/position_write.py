"""The one way the suite writes values at a position: a decoding cache's new keys and values (the attention
layers), the word chosen at a step and the attention row of that word (tx_keras/decoding)."""

from __future__ import annotations

import keras
from keras import ops


def write_at(tensor, index, update, axis: int):
    """`tensor` with `update` written along `axis` from `index` on (from 0 on every other axis).

    `index` may be a tensor (the position inside a compiled decoding loop): every shape stays fixed, so the
    loop is traced once, and only the slot is written instead of adding a one-hot mask over the whole
    tensor. `update` has `tensor`'s dtype and rank.
    """
    start = [0] * len(tensor.shape)
    start[axis] = index
    if keras.config.backend() == "tensorflow":
        return _strided_slice_update(tensor, start, update)
    return ops.slice_update(tensor, start, update)


def _strided_slice_update(tensor, start: list, update):
    """TensorFlow's own TensorStridedSliceUpdate, which writes in place when the old tensor has no other
    reader (a loop-carried cache). `ops.slice_update` is XLA's DynamicUpdateSlice there, run through XLA's
    runtime, and it copied the whole cache at every write: tx-bench's cached greedy decoding took
    1.20-1.32x the wall time at 128 slots, 1.06-1.13x at 64 and the same at 32 (Zen 5 EPYC, quiet;
    docs/performance.md "Cache writes in place")."""
    import tensorflow as tf

    begin = tf.stack([tf.cast(position, tf.int32) for position in start])
    end = begin + tf.shape(update, out_type=tf.int32)
    return tf.raw_ops.TensorStridedSliceUpdate(
        input=tensor, begin=begin, end=end, strides=tf.ones_like(begin), value=update
    )
