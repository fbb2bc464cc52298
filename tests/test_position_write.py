"""write_at: the one way decoding writes a value at a position (caches, chosen words, attention rows)."""

import numpy as np
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
