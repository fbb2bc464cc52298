"""SelfAttention (one head) and the masking helpers behind every attention layer."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.layers import SelfAttention, scaled_dot_product_attention
from tx_keras.layers.attention import causal_mask, combine_masks

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.normal(size=shape).astype("float32")


def _softmax(scores):
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def _by_hand(layer, query, value=None, mask=None):
    """softmax(q k^T / sqrt(d_k)) v with the layer's own Wq, Wk, Wv, in NumPy."""
    value = query if value is None else value
    wq, bq = layer._query.get_weights()
    wk, bk = layer._key.get_weights()
    wv, bv = layer._value.get_weights()
    q, k, v = query @ wq + bq, value @ wk + bk, value @ wv + bv
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = _softmax(scores)
    return weights @ v, weights


def test_causal_mask_is_lower_triangular():
    np.testing.assert_array_equal(ops.convert_to_numpy(causal_mask(3, 3)), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(
        ops.convert_to_numpy(causal_mask(2, 4)), [[True, False, False, False], [True, True, False, False]]
    )


def test_combine_masks():
    assert combine_masks(3, 3) is None
    key_mask = np.array([[1, 1, 0], [1, 0, 0]])
    attention_mask = np.ones((2, 3, 3), bool)
    attention_mask[0, 2, 0] = False
    combined = ops.convert_to_numpy(combine_masks(3, 3, attention_mask, key_mask, causal=True))
    expected = attention_mask & key_mask.astype(bool)[:, None, :] & np.tril(np.ones((3, 3), bool))[None]
    assert combined.shape == (2, 3, 3)
    np.testing.assert_array_equal(combined, expected)
    assert ops.convert_to_numpy(combine_masks(2, 3, causal=True)).shape == (1, 2, 3)


def test_scaled_dot_product_attention_by_hand():
    q, k, v = _x(2, 3, 4), _x(2, 5, 4), _x(2, 5, 6)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)[:, None, :]
    outputs, weights = scaled_dot_product_attention(q, k, v, mask)
    expected = _softmax(np.where(mask, q @ np.swapaxes(k, 1, 2) / 2.0, -np.inf))
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected, **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected @ v, **FLOAT32)
    assert np.all(ops.convert_to_numpy(weights)[0, :, 3:] == 0.0)


def test_self_attention_shapes():
    head = SelfAttention(key_dim=4)
    outputs, weights = head(_x(2, 5, 8))
    assert tuple(outputs.shape) == (2, 5, 4)
    assert tuple(weights.shape) == (2, 5, 5)
    assert head.compute_output_shape((2, 5, 8)) == ((2, 5, 4), (2, 5, 5))


def test_cross_attention_shapes_and_value_dim():
    head = SelfAttention(key_dim=4, value_dim=6)
    outputs, weights = head(_x(2, 3, 8), _x(2, 7, 5))
    assert tuple(outputs.shape) == (2, 3, 6)
    assert tuple(weights.shape) == (2, 3, 7)
    assert head.compute_output_shape((2, 3, 8), (2, 7, 5)) == ((2, 3, 6), (2, 3, 7))
    assert head._key.kernel.shape == (5, 4) and head._value.kernel.shape == (5, 6)


def test_self_attention_equals_hand_computation():
    head = SelfAttention(key_dim=4, value_dim=3)
    x = _x(2, 5, 8)
    outputs, weights = head(x)
    expected_out, expected_w = _by_hand(head, x)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected_w, **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected_out, **FLOAT32)


def test_cross_attention_equals_hand_computation():
    head = SelfAttention(key_dim=4)
    query, value = _x(2, 3, 8), _x(2, 6, 8)
    outputs, weights = head(query, value)
    expected_out, expected_w = _by_hand(head, query, value)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected_w, **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected_out, **FLOAT32)


def test_key_mask_weights_sum_to_one_and_zero_on_padding():
    head = SelfAttention(key_dim=4)
    x = _x(2, 5, 8)
    key_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], bool)
    outputs, weights = head(x, key_mask=key_mask)
    weights = ops.convert_to_numpy(weights)
    np.testing.assert_allclose(weights.sum(-1), np.ones((2, 5)), **FLOAT32)
    assert np.all(weights[0, :, 3:] == 0.0) and np.all(weights[1, :, 4] == 0.0)
    assert np.all(weights[0, :, :3] > 0.0)
    expected_out, expected_w = _by_hand(head, x, mask=key_mask[:, None, :])
    np.testing.assert_allclose(weights, expected_w, **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected_out, **FLOAT32)


def test_causal_weights_sum_to_one_and_zero_on_future():
    head = SelfAttention(key_dim=4)
    x = _x(2, 5, 8)
    outputs, weights = head(x, use_causal_mask=True)
    weights = ops.convert_to_numpy(weights)
    np.testing.assert_allclose(weights.sum(-1), np.ones((2, 5)), **FLOAT32)
    future = ~np.tril(np.ones((5, 5), bool))
    assert np.all(weights[:, future] == 0.0)
    np.testing.assert_allclose(weights[:, 0, 0], [1.0, 1.0], **FLOAT32)
    expected_out, _ = _by_hand(head, x, mask=~future[None])
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), expected_out, **FLOAT32)


def test_attention_mask_argument():
    head = SelfAttention(key_dim=4)
    x = _x(1, 4, 8)
    attention_mask = np.array([[[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 1, 0], [1, 1, 0, 0]]], bool)
    _, weights = head(x, attention_mask=attention_mask)
    weights = ops.convert_to_numpy(weights)
    assert np.all(weights[~attention_mask] == 0.0)
    np.testing.assert_allclose(weights[0, 2, 2], 1.0, **FLOAT32)
    np.testing.assert_allclose(weights.sum(-1), np.ones((1, 4)), **FLOAT32)


def test_dropout_only_in_training():
    head = SelfAttention(key_dim=4, dropout=0.5)
    x = _x(2, 5, 8)
    inference, _ = head(x)
    np.testing.assert_allclose(ops.convert_to_numpy(inference), _by_hand(head, x)[0], **FLOAT32)
    training, weights = head(x, training=True)
    assert not np.allclose(ops.convert_to_numpy(training), ops.convert_to_numpy(inference), atol=1e-4)
    # The returned weights are those before dropout.
    np.testing.assert_allclose(ops.convert_to_numpy(weights), _by_hand(head, x)[1], **FLOAT32)


def test_config_round_trip():
    head = SelfAttention(key_dim=4, value_dim=6, use_bias=False, dropout=0.1, name="head")
    x = _x(2, 5, 8)
    outputs, weights = head(x)
    config = head.get_config()
    assert config["key_dim"] == 4 and config["value_dim"] == 6
    assert config["use_bias"] is False and config["dropout"] == 0.1
    clone = SelfAttention.from_config(config)
    assert clone.get_config() == config
    clone.build((2, 5, 8))
    assert len(clone.get_weights()) == 3
    clone.set_weights(head.get_weights())
    clone_outputs, clone_weights = clone(x)
    np.testing.assert_allclose(ops.convert_to_numpy(clone_outputs), ops.convert_to_numpy(outputs), **FLOAT32)
    np.testing.assert_allclose(ops.convert_to_numpy(clone_weights), ops.convert_to_numpy(weights), **FLOAT32)


def test_serialize_keras_object_round_trip():
    head = SelfAttention(key_dim=4)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(head))
    assert isinstance(restored, SelfAttention)
    assert restored.get_config() == head.get_config()


@pytest.mark.parametrize("causal", [False, True])
def test_keras_save_load(tmp_path, causal):
    query = keras.Input((5, 8))
    value = keras.Input((7, 8))
    outputs, weights = SelfAttention(key_dim=4, name="head")(query, value, use_causal_mask=causal)
    model = keras.Model([query, value], [outputs, weights])
    inputs = [_x(2, 5, 8), _x(2, 7, 8)]
    before = [ops.convert_to_numpy(t) for t in model(inputs)]
    path = tmp_path / "attention.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert isinstance(loaded.get_layer("head"), SelfAttention)
    after = [ops.convert_to_numpy(t) for t in loaded(inputs)]
    for a, b in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, **FLOAT32)
    if causal:
        assert np.all(after[1][:, 0, 1:] == 0.0)
