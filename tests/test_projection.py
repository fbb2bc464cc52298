"""dense_on_rows: a Dense layer's function on flattened rows (so oneDNN fuses the bias and ReLU into the
matmul), with the Dense layer kept as the holder of its weights."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.float_tolerance import FLOAT32
from tx_keras.layers.projection import dense_on_rows, project_rows

RNG = np.random.default_rng(0)


def _dense(units: int, input_shape: tuple, **options) -> keras.layers.Dense:
    """A built Dense with random weights (non-zero biases, so they are checked too)."""
    dense = keras.layers.Dense(units, **options)
    dense.build(input_shape)
    dense.set_weights([RNG.normal(scale=0.5, size=w.shape).astype("float32") for w in dense.get_weights()])
    return dense


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 6), (2, 2, 3, 6)])
@pytest.mark.parametrize("options", [{}, {"activation": "relu"}, {"use_bias": False, "activation": "gelu"}])
def test_equals_the_dense_call_on_any_rank(shape, options):
    dense = _dense(7, shape, **options)
    x = RNG.normal(size=shape).astype("float32")
    y = dense_on_rows(dense, x)
    assert tuple(y.shape) == (*shape[:-1], 7)
    np.testing.assert_allclose(np.asarray(y), np.asarray(dense(x)), **FLOAT32)


def test_unknown_batch_and_length_in_a_traced_function():
    dense = _dense(5, (None, None, 6), activation="relu")
    traced = tf.function(
        lambda x: dense_on_rows(dense, x), input_signature=[tf.TensorSpec((None, None, 6), tf.float32)]
    )
    for shape in [(1, 1, 6), (3, 4, 6)]:
        x = RNG.normal(size=shape).astype("float32")
        np.testing.assert_allclose(traced(x).numpy(), np.asarray(dense(x)), **FLOAT32)


def test_mixed_precision_computes_in_the_layers_compute_dtype_outside_any_layer_call():
    """Called from a plain function (as the decoders call `Transformer.logits`), no autocast scope is open:
    the float32 weights are still cast, so the result is the bfloat16 Dense's, dtype included."""
    dense = _dense(4, (2, 3, 6), dtype="mixed_bfloat16")
    x = RNG.normal(size=(2, 3, 6)).astype("float32")
    y = dense_on_rows(dense, keras.ops.cast(x, "bfloat16"))
    assert keras.backend.standardize_dtype(y.dtype) == "bfloat16"
    expected = np.asarray(keras.ops.cast(dense(x), "float32"))
    np.testing.assert_allclose(np.asarray(keras.ops.cast(y, "float32")), expected, rtol=2e-2, atol=2e-2)


def test_project_rows_flattens_the_leading_axes():
    x = RNG.normal(size=(2, 3, 4)).astype("float32")
    kernel = RNG.normal(size=(4, 5)).astype("float32")
    bias = RNG.normal(size=(5,)).astype("float32")
    rows = np.asarray(project_rows(x, kernel, bias))
    assert rows.shape == (6, 5)
    np.testing.assert_allclose(rows, x.reshape(6, 4) @ kernel + bias, **FLOAT32)


def test_a_quantized_dense_keeps_its_own_call():
    """int8 weights are not the float kernel `project_rows` multiplies by: Dense's own call dequantizes."""
    dense = _dense(5, (2, 3, 6), activation="relu")
    dense.quantize("int8")
    x = RNG.normal(size=(2, 3, 6)).astype("float32")
    np.testing.assert_allclose(np.asarray(dense_on_rows(dense, x)), np.asarray(dense(x)), **FLOAT32)
