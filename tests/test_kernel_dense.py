"""The kernels' Dense: Keras' Dense function, weights and config, computed on flattened rows (so oneDNN fuses
the bias and ReLU into the matmul); project_rows' gradient written out as matmuls equals the one TensorFlow
and JAX derive."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import tx_keras.kernels.dense as dense_kernel
from tests.float_tolerance import FLOAT32
from tests.jax_subprocess import json_from_jax
from tx_keras.kernels import Dense, project_rows
from tx_keras.kernels.dense import bias_in_the_product

RNG = np.random.default_rng(0)


def _pair(units: int, input_shape: tuple, **options) -> tuple[Dense, keras.layers.Dense]:
    """Ours and Keras' Dense, built with the same random weights (non-zero biases: checked too)."""
    ours, theirs = Dense(units, **options), keras.layers.Dense(units, **options)
    ours.build(input_shape)
    theirs.build(input_shape)
    weights = [RNG.normal(scale=0.5, size=w.shape).astype("float32") for w in ours.get_weights()]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    return ours, theirs


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 6), (2, 2, 3, 6)])
@pytest.mark.parametrize("options", [{}, {"activation": "relu"}, {"use_bias": False, "activation": "gelu"}])
def test_equals_the_keras_dense_on_any_rank(shape, options):
    ours, theirs = _pair(7, shape, **options)
    x = RNG.normal(size=shape).astype("float32")
    y = ours(x)
    assert tuple(y.shape) == (*shape[:-1], 7)
    np.testing.assert_allclose(np.asarray(y), np.asarray(theirs(x)), **FLOAT32)


def test_same_weights_names_and_config_as_the_keras_dense():
    """A drop-in: checkpoints (weights in order), saved files (named `dense` in a list, after the class) and
    configs interchange with Keras' Dense."""
    ours, theirs = _pair(3, (2, 4), activation="relu", name="query")
    assert (
        [w.path for w in ours.weights] == [w.path for w in theirs.weights] == ["query/kernel", "query/bias"]
    )
    assert keras.src.utils.naming.to_snake_case(type(ours).__name__) == "dense"
    config = ours.get_config()
    assert config == theirs.get_config()
    assert Dense.from_config(config).get_config() == config
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(ours))
    assert type(restored) is Dense


def test_unknown_batch_and_length_in_a_traced_function():
    ours, theirs = _pair(5, (None, None, 6), activation="relu")
    traced = tf.function(lambda x: ours(x), input_signature=[tf.TensorSpec((None, None, 6), tf.float32)])
    for shape in [(1, 1, 6), (3, 4, 6)]:
        x = RNG.normal(size=shape).astype("float32")
        np.testing.assert_allclose(traced(x).numpy(), np.asarray(theirs(x)), **FLOAT32)


def test_mixed_precision_computes_in_the_layers_compute_dtype():
    """Under mixed_bfloat16 the float32 weights are cast: the bfloat16 Dense's result, dtype included."""
    ours, theirs = _pair(4, (2, 3, 6), dtype="mixed_bfloat16")
    x = RNG.normal(size=(2, 3, 6)).astype("float32")
    y = ours(x)
    assert keras.backend.standardize_dtype(y.dtype) == "bfloat16"
    expected = np.asarray(keras.ops.cast(theirs(x), "float32"))
    np.testing.assert_allclose(np.asarray(keras.ops.cast(y, "float32")), expected, rtol=2e-2, atol=2e-2)


def test_project_rows_flattens_the_leading_axes():
    x = RNG.normal(size=(2, 3, 4)).astype("float32")
    kernel_matrix = RNG.normal(size=(4, 5)).astype("float32")
    bias = RNG.normal(size=(5,)).astype("float32")
    rows = np.asarray(project_rows(x, kernel_matrix, bias))
    assert rows.shape == (6, 5)
    np.testing.assert_allclose(rows, x.reshape(6, 4) @ kernel_matrix + bias, **FLOAT32)


def test_a_quantized_dense_keeps_its_own_call():
    """int8 weights are not the float kernel `project_rows` multiplies by: Dense's own call dequantizes."""
    ours, theirs = _pair(5, (2, 3, 6), activation="relu")
    ours.quantize("int8")
    theirs.quantize("int8")
    x = RNG.normal(size=(2, 3, 6)).astype("float32")
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), **FLOAT32)


def _gradients(function, x, kernel, bias, upstream) -> list[np.ndarray]:
    """d(sum(function(x, kernel, bias) * upstream)) / d(x, kernel, bias), as float32 arrays."""
    x, kernel, bias = (tf.convert_to_tensor(t) for t in (x, kernel, bias))
    with tf.GradientTape() as tape:
        tape.watch([x, kernel, bias])
        loss = tf.reduce_sum(tf.cast(function(x, kernel, bias), "float32") * upstream)
    return [np.asarray(tf.cast(t, "float32")) for t in tape.gradient(loss, [x, kernel, bias])]


def _derived(x, kernel, bias):
    """The same projection through ops whose gradients TensorFlow derives itself."""
    return tf.reshape(x, (-1, kernel.shape[0])) @ kernel + bias


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 6), (2, 2, 3, 6)])
def test_the_written_gradient_equals_the_derived_one(shape):
    x = RNG.normal(size=shape).astype("float32")
    kernel = RNG.normal(size=(6, 7)).astype("float32")
    bias = RNG.normal(size=(7,)).astype("float32")
    upstream = RNG.normal(size=(int(np.prod(shape[:-1])), 7)).astype("float32")
    expected = _gradients(_derived, x, kernel, bias, upstream)
    got = _gradients(project_rows, x, kernel, bias, upstream)
    for name, a, b in zip(("d input", "d kernel", "d bias"), got, expected, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32, err_msg=name)


def test_the_bfloat16_bias_gradient_is_summed_in_float32():
    """600 rows of 1 + a little: TensorFlow's BiasAddGrad (what `ops.add` of a bias differentiates to on
    TensorFlow) sums bfloat16 in bfloat16 and gives 512, where the float32 sum is 603."""
    x = tf.cast(RNG.normal(size=(600, 4)), "bfloat16")
    kernel = tf.cast(RNG.normal(size=(4, 3)), "bfloat16")
    bias = tf.zeros((3,), "bfloat16")
    upstream = (1.0 + 0.01 * RNG.random(size=(600, 3))).astype("float32")
    got = _gradients(project_rows, x, kernel, bias, upstream)
    expected = _gradients(_derived, *(tf.cast(t, "float32") for t in (x, kernel, bias)), upstream)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("bias_row", [False, True])
def test_either_product_equals_the_derived_one_with_its_gradients(monkeypatch, bias_row):
    """The bias as a row of the kernel (AMX CPUs under bf16) or added after the product (elsewhere):
    checked in float32 on every machine, whichever this one picks."""
    monkeypatch.setattr(dense_kernel, "bias_in_the_product", lambda dtype: bias_row)
    x = RNG.normal(size=(2, 5, 6)).astype("float32")
    kernel = RNG.normal(size=(6, 7)).astype("float32")
    bias = RNG.normal(size=(7,)).astype("float32")
    upstream = RNG.normal(size=(10, 7)).astype("float32")
    np.testing.assert_allclose(
        np.asarray(project_rows(x, kernel, bias)), _derived(x, kernel, bias), **FLOAT32
    )
    expected = _gradients(_derived, x, kernel, bias, upstream)
    for a, b in zip(_gradients(project_rows, x, kernel, bias, upstream), expected, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32)


def test_the_bias_goes_into_the_product_for_bfloat16_on_amx_only(monkeypatch):
    monkeypatch.setattr(dense_kernel, "cpu_flags", lambda: frozenset({"avx512f", "avx512_bf16", "amx_bf16"}))
    assert bias_in_the_product("bfloat16") and bias_in_the_product(tf.bfloat16)
    assert not bias_in_the_product("float32")
    monkeypatch.setattr(dense_kernel, "cpu_flags", lambda: frozenset({"avx512f", "avx512_bf16"}))
    assert not bias_in_the_product("bfloat16")


def test_a_training_step_in_a_traced_function_gets_the_keras_dense_gradients():
    ours, theirs = _pair(5, (None, None, 6), activation="relu")
    x = RNG.normal(size=(3, 4, 6)).astype("float32")

    @tf.function(input_signature=[tf.TensorSpec((None, None, 6), tf.float32)])
    def gradients(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(ours(x) ** 2)
        return tape.gradient(loss, ours.trainable_weights)

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(theirs(x) ** 2)
    expected = tape.gradient(loss, theirs.trainable_weights)
    for a, b in zip(gradients(x), expected, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **FLOAT32)


_JAX_SIDE = """
import json, sys
import jax, numpy as np
from tx_keras.kernels import project_rows
rng = np.random.default_rng(0)
x, kernel, bias = (rng.normal(size=s).astype("float32") for s in ((2, 3, 6), (6, 7), (7,)))
up = rng.normal(size=(6, 7)).astype("float32")
derived = lambda x, k, b: ((x.reshape(-1, 6) @ k + b) * up).sum()
written = lambda x, k, b: (project_rows(x, k, b) * up).sum()
results = [jax.grad(f, argnums=(0, 1, 2))(x, kernel, bias) for f in (derived, written)]
json.dump([[np.asarray(t).tolist() for t in r] for r in results], sys.stdout)
"""


def test_the_written_gradient_equals_the_derived_one_on_jax():
    expected, got = json_from_jax(_JAX_SIDE)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), **FLOAT32)
