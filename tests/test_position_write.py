"""write_at: the one way decoding writes a value at a position (caches, chosen words, attention rows)."""

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tx_keras.layers.position_write import write_at


def test_writes_the_update_at_the_index_along_the_axis_and_nothing_else():
    tensor = np.arange(2 * 3 * 5, dtype="float32").reshape(2, 3, 5)
    update = -np.ones((2, 3, 2), "float32")
    written = ops.convert_to_numpy(write_at(tensor, 1, update, axis=2))
    expected = tensor.copy()
    expected[:, :, 1:3] = -1
    np.testing.assert_array_equal(written, expected)


@pytest.mark.parametrize("axis", range(5))
def test_every_axis_of_a_cache_shaped_tensor_is_written_through_the_2d_view(axis):
    """The write reshapes the tensor to (axes before `axis`, the rest): each axis must land where numpy
    puts it, as the (2, B, h, T, d_k) caches, the (B, T) buffer and the (B, layers, h, T, Ts) attention do."""
    tensor = np.arange(2 * 3 * 4 * 5 * 6, dtype="float32").reshape(2, 3, 4, 5, 6)
    shape = list(tensor.shape)
    shape[axis] = 1
    update = -np.arange(np.prod(shape), dtype="float32").reshape(shape) - 1
    written = ops.convert_to_numpy(write_at(tensor, 2, update, axis=axis))
    expected = tensor.copy()
    expected[(slice(None),) * axis + (slice(2, 3),)] = update
    np.testing.assert_array_equal(written, expected)


def test_an_empty_row_part_is_written_too():
    """One sentence decoded in two loops leaves one loop no rows: its (2, 0, h, T, d_k) cache still writes."""
    written = write_at(tf.zeros([2, 0, 3, 4, 5]), tf.constant(1), tf.zeros([2, 0, 3, 1, 5]), axis=3)
    assert tuple(written.shape) == (2, 0, 3, 4, 5)


def test_a_cache_in_a_loop_keeps_its_static_shape_and_every_slot():
    """Rows unknown (as in the SavedModel's signature): the written cache keeps the loop variable's static
    shape, and each step's slot holds that step's values."""

    @tf.function(input_signature=[tf.TensorSpec([2, None, 3, 4, 5])])
    def fill(cache):
        def step(i, cache):
            slot = tf.fill(tf.shape(cache[:, :, :, :1]), tf.cast(i, tf.float32))
            written = write_at(cache, i, slot, axis=3)
            assert written.shape.as_list() == [2, None, 3, 4, 5]
            return i + 1, written

        return tf.while_loop(lambda i, c: i < 4, step, (0, cache))[1]

    filled = fill(tf.zeros([2, 7, 3, 4, 5])).numpy()
    np.testing.assert_array_equal(filled, np.broadcast_to(np.arange(4.0)[:, None], (2, 7, 3, 4, 5)))


def test_a_tensor_index_inside_a_compiled_loop_keeps_shapes_fixed():
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.int32)])
    def fill(buffer):
        return tf.while_loop(
            lambda i, b: i < 4,
            lambda i, b: (i + 1, write_at(b, i, tf.fill([tf.shape(b)[0], 1], i + 10), axis=1)),
            (0, buffer),
        )[1]

    np.testing.assert_array_equal(fill(tf.zeros([2, 4], tf.int32)), [[10, 11, 12, 13]] * 2)
    assert fill.experimental_get_tracing_count() == 1
