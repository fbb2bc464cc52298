"""FeedForward: Dense(dff, relu) -> dropout -> Dense(d_model) per position."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.layers import FeedForward

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.normal(size=shape).astype("float32")


def _by_hand(layer, x):
    w1, b1 = layer._hidden.get_weights()
    w2, b2 = layer._output.get_weights()
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def _randomize(layer):
    layer.set_weights([RNG.normal(scale=0.5, size=w.shape).astype("float32") for w in layer.get_weights()])


def test_shape_and_weights():
    layer = FeedForward(d_model=6, dff=10)
    y = layer(_x(2, 3, 6))
    assert tuple(y.shape) == (2, 3, 6)
    assert [tuple(w.shape) for w in layer.weights] == [(6, 10), (10,), (10, 6), (6,)]
    assert layer.compute_output_shape((None, 3, 6)) == (None, 3, 6)


def test_equals_relu_formula():
    layer = FeedForward(d_model=6, dff=10)
    layer.build((2, 3, 6))
    _randomize(layer)  # non-zero biases, so they are checked too
    x = _x(2, 3, 6)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x)), _by_hand(layer, x), **FLOAT32)


def test_position_wise():
    """Each token is transformed independently: a change at one position leaves the others alone."""
    layer = FeedForward(d_model=4, dff=8)
    x = _x(1, 3, 4)
    changed = x.copy()
    changed[0, 1] += 5.0
    before, after = ops.convert_to_numpy(layer(x)), ops.convert_to_numpy(layer(changed))
    np.testing.assert_allclose(after[0, [0, 2]], before[0, [0, 2]], **FLOAT32)
    assert not np.allclose(after[0, 1], before[0, 1])


def test_other_activation():
    layer = FeedForward(d_model=4, dff=8, activation="tanh")
    layer.build((1, 2, 4))
    _randomize(layer)
    x = _x(1, 2, 4)
    w1, b1 = layer._hidden.get_weights()
    w2, b2 = layer._output.get_weights()
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x)), np.tanh(x @ w1 + b1) @ w2 + b2, **FLOAT32)


def test_dropout_only_in_training():
    layer = FeedForward(d_model=6, dff=32, dropout=0.5)
    layer.build((2, 3, 6))
    _randomize(layer)
    x = _x(2, 3, 6)
    expected = _by_hand(layer, x)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x)), expected, **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(x, training=False)), expected, **FLOAT32)
    trained = ops.convert_to_numpy(layer(x, training=True))
    assert trained.shape == expected.shape
    assert not np.allclose(trained, expected, atol=1e-3)


@pytest.mark.parametrize(("d_model", "dff"), [(0, 4), (4, 0)])
def test_non_positive_sizes_raise(d_model, dff):
    with pytest.raises(ValueError, match="must be positive"):
        FeedForward(d_model=d_model, dff=dff)


def test_config_round_trip():
    layer = FeedForward(d_model=6, dff=10, activation="gelu", dropout=0.2, name="ffn")
    x = _x(2, 3, 6)
    y = layer(x)
    config = layer.get_config()
    assert {k: config[k] for k in ("d_model", "dff", "activation", "dropout")} == {
        "d_model": 6,
        "dff": 10,
        "activation": "gelu",
        "dropout": 0.2,
    }
    clone = FeedForward.from_config(config)
    assert clone.get_config() == config
    clone.build((2, 3, 6))
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(ops.convert_to_numpy(clone(x)), ops.convert_to_numpy(y), **FLOAT32)


def test_keras_save_load(tmp_path):
    inputs = keras.Input((3, 6))
    model = keras.Model(inputs, FeedForward(d_model=6, dff=10, name="ffn")(inputs))
    _randomize(model.get_layer("ffn"))
    x = _x(2, 3, 6)
    before = ops.convert_to_numpy(model(x))
    path = tmp_path / "ffn.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert isinstance(loaded.get_layer("ffn"), FeedForward)
    np.testing.assert_allclose(ops.convert_to_numpy(loaded(x)), before, **FLOAT32)
    np.testing.assert_allclose(before, _by_hand(loaded.get_layer("ffn"), x), **FLOAT32)
