"""attention=none: each position reads only its aligned position, so outputs carry no context."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.layers import AlignedAttention
from tx_keras.layers.aligned_attention import aligned_weights
from tx_keras.models import ModelConfig, Transformer


def _x(batch, length, width, seed=0):
    return np.random.default_rng(seed).normal(size=(batch, length, width)).astype("float32")


def test_weights_are_the_identity_clipped_at_the_last_visible_key():
    weights = ops.convert_to_numpy(aligned_weights(5, 3, mask=np.array([[[True, True, False]]])))
    assert weights.shape == (1, 5, 3)
    np.testing.assert_array_equal(weights[0].argmax(-1), [0, 1, 1, 1, 1])  # key 2 is padding
    assert (weights.sum(-1) == 1).all()
    later = ops.convert_to_numpy(aligned_weights(1, 4, query_position=2))
    np.testing.assert_array_equal(later[0], [[False, False, True, False]])


def test_self_attention_output_at_a_position_ignores_every_other_position():
    layer = AlignedAttention(num_heads=2, d_model=8)
    x = _x(2, 6, 8)
    y, weights = layer(x, return_attention_scores=True)
    changed = x.copy()
    changed[:, [0, 1, 2, 4, 5]] += 3.0  # everything but position 3
    y_changed = ops.convert_to_numpy(layer(changed))
    np.testing.assert_allclose(ops.convert_to_numpy(y)[:, 3], y_changed[:, 3], **FLOAT32)
    assert not np.allclose(ops.convert_to_numpy(y)[:, 2], y_changed[:, 2])
    assert weights.shape == (2, 2, 6, 6)
    np.testing.assert_array_equal(ops.convert_to_numpy(weights)[1, 1], np.eye(6))
    # Exactly the value and output projections of the token itself.
    v = np.einsum("btd,dhk->bhtk", x, ops.convert_to_numpy(layer.value_kernel))
    expected = np.einsum("bhtk,hkd->btd", v, ops.convert_to_numpy(layer.output_kernel))
    np.testing.assert_allclose(ops.convert_to_numpy(y), expected, **FLOAT32)
    assert len(layer.weights) == 4  # W_v, W_o and their biases: no W_q, W_k


def test_cross_attention_reads_the_aligned_source_position_and_the_last_real_one_beyond():
    layer = AlignedAttention(num_heads=1, d_model=4)
    target, memory = _x(1, 5, 4), _x(1, 3, 4, seed=1)
    key_mask = np.array([[True, True, False]])
    y = ops.convert_to_numpy(layer(target, memory, key_mask=key_mask))
    for t, source in enumerate([0, 1, 1, 1, 1]):
        alone = ops.convert_to_numpy(layer(target[:, :1], memory[:, source : source + 1]))
        np.testing.assert_allclose(y[:, t], alone[:, 0], **FLOAT32)


def test_config_round_trip():
    layer = AlignedAttention(num_heads=4, d_model=16, dropout=0.1, use_bias=False, name="none")
    x = _x(2, 3, 16)
    expected = ops.convert_to_numpy(layer(x))
    clone = AlignedAttention.from_config(layer.get_config())
    clone.build((2, 3, 16))
    clone.set_weights(layer.get_weights())
    assert clone.get_config() == layer.get_config()
    np.testing.assert_allclose(ops.convert_to_numpy(clone(x)), expected, **FLOAT32)


def _model():
    return Transformer(
        ModelConfig(
            num_encoder_layers=2, num_decoder_layers=2, d_model=16, num_heads=2, dff=32, attention="none"
        ),
        12,
        12,
        6,
        6,
    )


def test_a_transformer_without_attention_is_a_per_position_predictor(tmp_path):
    model = _model()
    source = np.array([[5, 6, 7, 8, 2, 0]], "int32")
    target = np.array([[1, 9, 10, 11, 4, 5]], "int32")
    logits = ops.convert_to_numpy(model((source, target)))
    other_source, other_target = source.copy(), target.copy()
    other_source[0, [0, 1, 3]] = [9, 10, 4]
    other_target[0, [0, 1, 3, 4]] = [6, 7, 8, 9]
    changed = ops.convert_to_numpy(model((other_source, other_target)))
    np.testing.assert_allclose(logits[:, 2], changed[:, 2], **FLOAT32)  # source 2 and target 2 kept
    np.testing.assert_allclose(logits[:, 5], changed[:, 5], **FLOAT32)  # beyond the source: its EOS
    assert not np.allclose(logits[:, 1], changed[:, 1])
    model.save(tmp_path / "model.keras")
    loaded = keras.models.load_model(tmp_path / "model.keras", safe_mode=True)
    assert loaded.config.attention == "none" and loaded.get_config() == model.get_config()
    np.testing.assert_allclose(ops.convert_to_numpy(loaded((source, target))), logits, **FLOAT32)


@pytest.mark.slow  # traces two decoders: ~22 s loaded (test_decoding_reference pins the aligned variant)
def test_cached_decoding_matches_the_uncached_reference():
    model = _model()
    source = np.random.default_rng(2).integers(4, 12, size=(4, 6)).astype("int32")
    source[:2, 3:] = 0
    source[:2, 3] = 2
    expected = greedy_decoder(model, 6)(source).numpy()
    np.testing.assert_array_equal(cached_greedy_decoder(model, 6)(source).numpy(), expected)


def _output_bias_gradient(dtype: str, weights: list, x: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    layer = AlignedAttention(num_heads=2, d_model=8, dtype=dtype)
    layer.build(x.shape)
    layer.set_weights(weights)
    with tf.GradientTape() as tape:
        outputs = tf.cast(layer(x), "float32")
        loss = tf.reduce_sum(outputs * upstream)
    return np.asarray(tape.gradient(loss, layer.output_bias))


def test_the_bfloat16_output_bias_gradient_is_summed_in_float32():
    """600 positions: the output bias's gradient sums 600 rows of ~1. Added with `keras.ops.add` (which is
    `tf.nn.bias_add` on TensorFlow) it would differentiate to BiasAddGrad, which sums bfloat16 in bfloat16:
    512 where the float32 sum is ~603. The form combines its heads through `project_rows`, as the fused
    one does."""
    x = _x(4, 150, 8)
    upstream = (1.0 + 0.01 * np.random.default_rng(1).random((4, 150, 8))).astype("float32")
    reference = AlignedAttention(num_heads=2, d_model=8)
    reference.build(x.shape)
    weights = [
        np.random.default_rng(2).normal(size=w.shape).astype("float32") * 0.1 for w in reference.get_weights()
    ]
    expected = _output_bias_gradient("float32", weights, x, upstream)
    assert expected.min() > 600  # the sums the test is about
    got = _output_bias_gradient("mixed_bfloat16", weights, x, upstream)
    np.testing.assert_allclose(got, expected, rtol=2e-2)
