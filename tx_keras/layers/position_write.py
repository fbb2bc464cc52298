"""The one way the suite writes values at a position: a decoding cache's new keys and values (the attention
layers), the word chosen at a step and the attention row of that word (tx_keras/decoding)."""

from __future__ import annotations

import keras
from keras import ops


def write_at(tensor, index, update, axis: int):
    """`tensor` with `update` written along `axis` from `index` on.

    `update` has `tensor`'s dtype and rank and spans every other axis whole (a slot of a cache, a column
    of a buffer). `index` may be a tensor (the position inside a compiled decoding loop): every shape
    stays fixed, so the loop is traced once, and only the slot is written instead of adding a one-hot mask
    over the whole tensor.
    """
    if keras.config.backend() == "tensorflow":
        return _strided_slice_update(tensor, index, update, axis)
    start = [0] * len(tensor.shape)
    start[axis] = index
    return ops.slice_update(tensor, start, update)


def _strided_slice_update(tensor, index, update, axis: int):
    """TensorFlow's own TensorStridedSliceUpdate, which writes in place when the old tensor has no other
    reader (a loop-carried cache). `ops.slice_update` is XLA's DynamicUpdateSlice there, run through XLA's
    runtime, and it copied the whole cache at every write: a cost that grows with the cache
    (docs/decisions/cached-decoder-in-place.md).

    The write goes through a 2-D view, (axes before `axis`, the rest): the op's time is per element
    written, and it falls with the view's rank (docs/decisions/cached-decoder-in-place.md). Both
    reshapes share the buffer, so the write stays in place."""
    import tensorflow as tf

    shape = tf.shape(tensor, out_type=tf.int32)
    rows, slot = tf.reduce_prod(shape[:axis]), tf.reduce_prod(shape[axis + 1 :])
    view = tf.reshape(tensor, tf.stack([rows, shape[axis] * slot]))
    written = tf.reshape(update, tf.stack([rows, tf.shape(update, out_type=tf.int32)[axis] * slot]))
    begin = tf.stack([0, tf.cast(index, tf.int32) * slot])
    end = begin + tf.shape(written, out_type=tf.int32)
    result = tf.raw_ops.TensorStridedSliceUpdate(
        input=view, begin=begin, end=end, strides=[1, 1], value=written
    )
    result = tf.reshape(result, shape)
    result.set_shape(tensor.shape)
    return result
