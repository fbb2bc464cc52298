"""RotaryPositions: attention scores that see only relative positions, the same in cached decoding."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.layers import LoopedMultiHeadAttention, MultiHeadAttention, RotaryPositions
from tx_keras.models import ModelConfig, Transformer

RNG = np.random.default_rng(0)


def _numpy(x) -> np.ndarray:
    return ops.convert_to_numpy(x)


def test_rotation_keeps_lengths_and_turns_each_pair_by_position():
    rotate = RotaryPositions(key_dim=4, max_wavelength=100.0)
    x = RNG.normal(size=(2, 3, 5, 4)).astype("float32")
    rotated = _numpy(rotate(x, start_index=2))
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(_numpy(rotate(x[:, :, :1], start_index=0)), x[:, :, :1], **FLOAT32)
    angle = 3 * 100.0 ** (-2 / 4)  # pair 1 = features (1, 3) at position 3
    first, second = x[..., 1, 1], x[..., 1, 3]
    expected = first * np.cos(angle) - second * np.sin(angle)
    np.testing.assert_allclose(rotated[..., 1, 1], expected, **FLOAT32)


def test_scores_depend_only_on_relative_positions():
    """q_m . k_n after rotation is a function of m - n: shifting every position leaves the scores."""
    rotate = RotaryPositions(key_dim=8)
    queries, keys = (RNG.normal(size=(2, 4, 6, 8)).astype("float32") for _ in range(2))

    def scores(start):
        return _numpy(
            ops.matmul(
                rotate(queries, start_index=start), ops.swapaxes(rotate(keys, start_index=start), -1, -2)
            )
        )

    np.testing.assert_allclose(scores(7), scores(0), atol=1e-4)
    assert not np.allclose(scores(0), np.einsum("bhqd,bhkd->bhqk", queries, keys), atol=1e-2)


def test_odd_key_dim_is_refused():
    with pytest.raises(ValueError, match="even key_dim"):
        RotaryPositions(key_dim=5)


@pytest.mark.parametrize("attention", [MultiHeadAttention, LoopedMultiHeadAttention])
def test_rotary_attention_cached_step_by_step_equals_the_causal_call(attention):
    """Self-attention with rotation, one position at a time through the cache (rotated at
    cache_update_index), gives the outputs of the whole causal call; and a shifted sequence the same."""
    layer = attention(num_heads=2, d_model=8, position_rotation=RotaryPositions(4))
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    key_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)
    expected = _numpy(layer(x, key_mask=key_mask, use_causal_mask=True))
    plain = attention(num_heads=2, d_model=8)
    plain.build(x.shape)
    plain.set_weights(layer.get_weights())
    assert not np.allclose(_numpy(plain(x, key_mask=key_mask, use_causal_mask=True)), expected, atol=1e-3)
    cache = np.zeros((2, 2, 2, 5, 4), "float32")
    for t in range(5):
        step, cache = layer(
            x[:, t : t + 1], key_mask=key_mask, use_causal_mask=True, cache=cache, cache_update_index=t
        )
        np.testing.assert_allclose(_numpy(step)[:, 0], expected[:, t], **FLOAT32)
    shifted = np.zeros((2, 2, 2, 8, 4), "float32")  # the same sequence written from position 3 on
    outputs, _ = layer(
        x,
        use_causal_mask=True,
        cache=shifted,
        cache_update_index=3,
        key_mask=np.pad(key_mask, ((0, 0), (3, 0))),
    )
    np.testing.assert_allclose(_numpy(outputs), expected, **FLOAT32)


def test_rotary_layer_round_trips_inside_attention_config():
    layer = MultiHeadAttention(num_heads=2, d_model=8, position_rotation=RotaryPositions(4, name="rotation"))
    clone = MultiHeadAttention.from_config(layer.get_config())
    assert isinstance(clone.position_rotation, RotaryPositions) and clone.position_rotation.key_dim == 4
    assert clone.get_config() == layer.get_config()


@pytest.mark.parametrize(
    "attention_impl", ["fused", pytest.param("looped", marks=pytest.mark.slow)]
)  # ~14 s each
def test_rotary_transformer_decodes_the_same_words_cached_and_uncached(attention_impl, tmp_path):
    keras.utils.set_random_seed(3)
    config = ModelConfig(
        num_encoder_layers=1,
        num_decoder_layers=2,
        d_model=16,
        num_heads=2,
        dff=32,
        positions="rotary",
        attention_impl=attention_impl,
    )
    model = Transformer(config, 12, 12, 7, 6)
    source = RNG.integers(4, 12, size=(5, 7)).astype("int32")
    source[:2, 4:] = 0
    model((source, source[:, :6]))
    rotations = [block._self_attention.position_rotation for block in model.decoder._blocks]
    assert all(isinstance(rotation, RotaryPositions) for rotation in rotations)
    assert all(block._cross_attention.position_rotation is None for block in model.decoder._blocks)
    expected = greedy_decoder(model, 6)(source).numpy()
    np.testing.assert_array_equal(cached_greedy_decoder(model, 6)(source).numpy(), expected)
    np.testing.assert_array_equal(beam_search_decoder(model, 6, width=1)(source).numpy(), expected)
    model.save(tmp_path / "model.keras")
    loaded = keras.models.load_model(tmp_path / "model.keras", safe_mode=True)
    np.testing.assert_array_equal(cached_greedy_decoder(loaded, 6)(source).numpy(), expected)
