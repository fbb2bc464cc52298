"""LayerNorm: Keras' LayerNormalization with its gradient written out. Same outputs and gradients as the
built-in layer, fewer ops in the backward pass, and the built-in computation wherever the shortcut does
not apply."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.float_tolerance import FLOAT32
from tests.jax_subprocess import json_from_jax
from tx_keras.layers import LayerNorm

RNG = np.random.default_rng(0)


def _pair(shape: tuple, dtype: str = "float32", **options) -> tuple[keras.layers.Layer, LayerNorm]:
    """The built-in layer and ours, built alike and holding the same random gamma and beta."""
    builtin = keras.layers.LayerNormalization(dtype=dtype, **options)
    ours = LayerNorm(dtype=dtype, **options)
    for layer in (builtin, ours):
        layer.build(shape)
    weights = [RNG.normal(size=w.shape).astype("float32") for w in builtin.get_weights()]
    for layer in (builtin, ours):
        layer.set_weights(weights)
    return builtin, ours


def _value_and_gradients(layer, x, upstream) -> list[np.ndarray]:
    """The output and d(sum(output * upstream)) / d(input, weights...)."""
    x = tf.convert_to_tensor(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(tf.cast(y, "float32") * upstream)
    gradients = tape.gradient(loss, [x, *layer.trainable_weights])
    return [np.asarray(tf.cast(t, "float32")) for t in (y, *gradients)]


@pytest.mark.parametrize("shape", [(5, 16), (3, 7, 16), (2, 3, 4, 8)])
def test_outputs_and_gradients_equal_the_builtin_layers(shape):
    builtin, ours = _pair(shape, epsilon=1e-6)
    x = (3.0 + 2.0 * RNG.normal(size=shape)).astype("float32")
    upstream = RNG.normal(size=shape).astype("float32")
    expected = _value_and_gradients(builtin, x, upstream)
    got = _value_and_gradients(ours, x, upstream)
    for name, a, b in zip(("output", "d input", "d gamma", "d beta"), got, expected, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32, err_msg=name)


def test_mixed_bfloat16_computes_in_float32_and_returns_bfloat16():
    shape = (4, 9, 32)
    builtin, ours = _pair(shape, dtype="mixed_bfloat16", epsilon=1e-6)
    x = tf.cast(3.0 + 2.0 * RNG.normal(size=shape), "bfloat16")
    upstream = RNG.normal(size=shape).astype("float32")
    assert keras.backend.standardize_dtype(ours(x).dtype) == "bfloat16"
    expected = _value_and_gradients(builtin, x, upstream)
    got = _value_and_gradients(ours, x, upstream)
    # both compute in float32 from the same bfloat16 input; the outputs round to bfloat16 alike
    for name, a, b in zip(("output", "d input", "d gamma", "d beta"), got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2, err_msg=name)


@pytest.mark.parametrize("options", [{"axis": 1}, {"rms_scaling": True}, {"center": False}, {"scale": False}])
def test_other_settings_run_the_builtin_computation(options):
    shape = (3, 5, 8)
    builtin, ours = _pair(shape, **options)
    x = RNG.normal(size=shape).astype("float32")
    upstream = RNG.normal(size=shape).astype("float32")
    expected = _value_and_gradients(builtin, x, upstream)
    for a, b in zip(_value_and_gradients(ours, x, upstream), expected, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32)


def _gradient_graph_ops(layer, shape) -> int:
    """Ops in the traced graph of the layer's forward and backward pass (before graph optimisation)."""

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
        return tape.gradient(y, [x, *layer.trainable_weights])

    graph = step.get_concrete_function(tf.TensorSpec(shape, tf.float32)).graph
    return len(graph.get_operations())


def test_the_backward_pass_has_fewer_ops_than_the_builtins():
    shape = (8, 12, 32)
    builtin, ours = _pair(shape)
    assert _gradient_graph_ops(ours, shape) < 0.8 * _gradient_graph_ops(builtin, shape)


def test_config_round_trips_and_a_saved_model_file_reloads(tmp_path):
    _, ours = _pair((2, 3, 8), epsilon=1e-6)
    config = ours.get_config()
    again = LayerNorm.from_config(config)
    assert again.get_config() == config
    inputs = keras.Input((3, 8))
    model = keras.Model(inputs, ours(inputs))
    model.save(tmp_path / "norm.keras")
    loaded = keras.saving.load_model(tmp_path / "norm.keras")
    assert type(loaded.layers[-1]) is LayerNorm
    x = RNG.normal(size=(2, 3, 8)).astype("float32")
    np.testing.assert_allclose(np.asarray(loaded(x)), np.asarray(model(x)), **FLOAT32)


_JAX_SIDE = """
import json, sys
import jax, keras, numpy as np
from tx_keras.layers import LayerNorm
rng = np.random.default_rng(0)
x = (3.0 + 2.0 * rng.normal(size=(3, 7, 16))).astype("float32")
up = rng.normal(size=(3, 7, 16)).astype("float32")
g = rng.normal(size=16).astype("float32"); b = rng.normal(size=16).astype("float32")
results = []
for layer in (keras.layers.LayerNormalization(epsilon=1e-6), LayerNorm(epsilon=1e-6)):
    layer.build(x.shape)
    layer.set_weights([g, b])
    def loss(x, gamma, beta):
        y, _ = layer.stateless_call([gamma, beta], [], x)
        return (y * up).sum()
    grads = jax.grad(loss, argnums=(0, 1, 2))(x, layer.gamma.value, layer.beta.value)
    results.append([np.asarray(t).tolist() for t in grads])
json.dump(results, sys.stdout)
"""


def test_the_gradient_is_the_builtins_on_jax_too():
    expected, got = json_from_jax(_JAX_SIDE)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), **FLOAT32)
