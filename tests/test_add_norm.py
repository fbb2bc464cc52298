"""AddNorm: the residual and the LayerNorm placement as switches, against the docstring's table."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.layers import AddNorm
from tx_keras.norm_placement import NORM_MODES

EPS = 1e-6
RNG = np.random.default_rng(0)
W = RNG.normal(size=(6, 6)).astype("float32")


def _x(*shape):
    return (3.0 + 2.0 * RNG.normal(size=shape)).astype("float32")


def _sublayer(h):
    """A fixed sublayer F: a matrix product, the same in Keras and NumPy."""
    return ops.matmul(h, W)


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta


FORMULAS = {
    ("post", True): lambda x, ln: ln(x + x @ W),
    ("post", False): lambda x, ln: ln(x @ W),
    ("pre", True): lambda x, ln: x + ln(x) @ W,
    ("pre", False): lambda x, ln: ln(x) @ W,
    ("none", True): lambda x, ln: x + x @ W,
    ("none", False): lambda x, ln: x @ W,
}


@pytest.mark.parametrize(("norm", "residual"), list(FORMULAS))
def test_matches_docstring_table(norm, residual):
    layer = AddNorm(residual=residual, norm=norm, epsilon=EPS)
    x = _x(2, 3, 6)
    layer.build((2, 3, 6))
    gamma = beta = None
    if norm != "none":
        gamma = RNG.normal(size=6).astype("float32")
        beta = RNG.normal(size=6).astype("float32")
        layer._norm.set_weights([gamma, beta])
        assert len(layer.weights) == 2
    else:
        assert layer.weights == []
    outputs = layer(x, _sublayer(layer.sublayer_input(x)))
    expected = FORMULAS[norm, residual](x, lambda t: _layer_norm(t, gamma, beta))
    assert tuple(outputs.shape) == (2, 3, 6)
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("norm", NORM_MODES)
def test_sublayer_input(norm):
    layer = AddNorm(norm=norm, epsilon=EPS)
    x = _x(2, 3, 6)
    layer.build((2, 3, 6))
    h = ops.convert_to_numpy(layer.sublayer_input(x))
    if norm == "pre":
        np.testing.assert_allclose(h, _layer_norm(x, 1.0, 0.0), **FLOAT32)
    else:
        np.testing.assert_array_equal(h, x)


def test_post_norm_output_is_normalised_per_token():
    layer = AddNorm(residual=True, norm="post")
    x = _x(2, 4, 6)
    outputs = ops.convert_to_numpy(layer(x, 5.0 * _x(2, 4, 6)))
    np.testing.assert_allclose(outputs.mean(-1), np.zeros((2, 4)), **FLOAT32)
    np.testing.assert_allclose(outputs.std(-1), np.ones((2, 4)), atol=1e-3)


def test_dropout_only_in_training():
    layer = AddNorm(residual=True, norm="none", dropout=0.5)
    x, f = _x(2, 3, 16), _x(2, 3, 16)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x, f)), x + f, **FLOAT32)
    trained = ops.convert_to_numpy(layer(x, f, training=True))
    dropped = (trained - x) == 0.0
    assert dropped.any() and not dropped.all()
    np.testing.assert_allclose(trained[~dropped], (x + 2.0 * f)[~dropped], **FLOAT32)


def test_unknown_norm_raises_with_choices():
    with pytest.raises(ValueError, match="norm='middle'") as error:
        AddNorm(norm="middle")
    for choice in NORM_MODES:
        assert choice in str(error.value)


def test_config_round_trip():
    layer = AddNorm(residual=False, norm="pre", dropout=0.1, epsilon=1e-5, name="add_norm")
    x = _x(2, 3, 6)
    layer.build((2, 3, 6))
    layer._norm.set_weights([RNG.normal(size=6).astype("float32"), RNG.normal(size=6).astype("float32")])
    y = layer(x, _sublayer(layer.sublayer_input(x)))
    config = layer.get_config()
    assert {k: config[k] for k in ("residual", "norm", "dropout", "epsilon")} == {
        "residual": False,
        "norm": "pre",
        "dropout": 0.1,
        "epsilon": 1e-5,
    }
    clone = AddNorm.from_config(config)
    assert clone.get_config() == config
    clone.build((2, 3, 6))
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        ops.convert_to_numpy(clone(x, _sublayer(clone.sublayer_input(x)))), ops.convert_to_numpy(y), **FLOAT32
    )


def _save_and_reload(model, tmp_path):
    path = tmp_path / "add_norm.keras"
    model.save(path)
    return keras.models.load_model(path, safe_mode=True)


@pytest.mark.parametrize("norm", NORM_MODES)
def test_keras_save_load(tmp_path, norm):
    inputs = keras.Input((3, 6))
    add_norm = AddNorm(residual=True, norm=norm, name="add_norm")
    model = keras.Model(inputs, add_norm(inputs, keras.layers.Dense(6, name="sublayer")(inputs)))
    if norm != "none":
        add_norm._norm.set_weights(
            [RNG.normal(size=6).astype("float32"), RNG.normal(size=6).astype("float32")]
        )
    x = _x(2, 3, 6)
    before = ops.convert_to_numpy(model(x))
    loaded = _save_and_reload(model, tmp_path)
    assert isinstance(loaded.get_layer("add_norm"), AddNorm)
    assert loaded.get_layer("add_norm").get_config() == add_norm.get_config()
    np.testing.assert_allclose(ops.convert_to_numpy(loaded(x)), before, **FLOAT32)


@pytest.mark.parametrize("norm", NORM_MODES)
def test_two_step_use_without_explicit_build(norm):
    """The docstring's `h = add_norm.sublayer_input(x)` then `add_norm(x, F(h))`, on a fresh layer."""
    layer = AddNorm(residual=True, norm=norm, epsilon=EPS)
    x = _x(2, 3, 6)
    outputs = layer(x, _sublayer(layer.sublayer_input(x)))
    expected = FORMULAS[norm, True](x, lambda t: _layer_norm(t, 1.0, 0.0))
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected, rtol=1e-4, atol=1e-4)


def test_a_users_norm_class_replaces_layer_norm_by_import_path():
    """norm_impl names the norm class (components.py): here an RMS norm, no centring."""
    layer = AddNorm(residual=False, norm="post", norm_impl="tests.test_plugin_components.ToyRMSNorm")
    x = _x(2, 3, 6)
    y = ops.convert_to_numpy(layer(np.zeros_like(x), x))
    np.testing.assert_allclose(y, x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + EPS), rtol=1e-5)
    assert type(layer._norm).__name__ == "ToyRMSNorm" and len(layer.weights) == 1  # a scale, no bias
    copy = AddNorm.from_config(layer.get_config())
    assert copy.norm_impl == layer.norm_impl and type(copy._norm) is type(layer._norm)
