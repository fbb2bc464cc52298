"""TokenAndPositionEmbedding and the sinusoidal position table."""

import math

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.components import BUILTINS, ComponentError
from tx_keras.layers import TokenAndPositionEmbedding
from tx_keras.layers.sinusoidal_positions import sinusoidal_positions

IDS = np.array([[5, 3, 7, 0, 0], [1, 2, 3, 4, 9]], dtype="int32")


def _tokens(layer):
    return layer._tokens.get_weights()[0]


def test_shape():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8)
    y = layer(IDS)
    assert tuple(y.shape) == (2, 5, 4)
    assert layer.compute_output_shape((None, 5)) == (None, 5, 4)


@pytest.mark.parametrize(("p", "j"), [(0, 0), (0, 1), (1, 0), (1, 1), (3, 2), (3, 3), (7, 4), (5, 5)])
def test_sinusoidal_table_values(p, j):
    d = 6
    table = sinusoidal_positions(8, d)
    i = j // 2
    angle = p / 10000 ** (2 * i / d)
    expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    assert table.shape == (8, d) and table.dtype == np.float32
    assert table[p, j] == pytest.approx(expected, abs=1e-6)


def test_sinusoidal_table_by_formula():
    table = sinusoidal_positions(50, 8)
    np.testing.assert_array_equal(table[0], [0, 1, 0, 1, 0, 1, 0, 1])
    p = np.arange(50)[:, None]
    i = np.arange(4)[None, :]
    angles = p / np.power(10000.0, 2 * i / 8)
    np.testing.assert_allclose(table[:, 0::2], np.sin(angles), **FLOAT32)
    np.testing.assert_allclose(table[:, 1::2], np.cos(angles), **FLOAT32)
    assert table[10, 0] == pytest.approx(math.sin(10.0), abs=1e-6)
    assert table[10, 3] == pytest.approx(math.cos(10.0 / 10000**0.25), abs=1e-6)


def test_sinusoidal_output_is_scaled_tokens_plus_table():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8)
    y = ops.convert_to_numpy(layer(IDS))
    expected = _tokens(layer)[IDS] * 2.0 + sinusoidal_positions(8, 4)[None, :5]
    np.testing.assert_allclose(y, expected, **FLOAT32)
    assert len(layer.weights) == 1 and len(layer.trainable_weights) == 1  # the table is a constant


def test_scale_false():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, scale=False)
    y = ops.convert_to_numpy(layer(IDS))
    np.testing.assert_allclose(y, _tokens(layer)[IDS] + sinusoidal_positions(8, 4)[None, :5], **FLOAT32)


def test_learned_positions_add_a_trainable_table():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, positions="learned")
    y = ops.convert_to_numpy(layer(IDS))
    assert len(layer.trainable_weights) == 2
    assert sorted(tuple(w.shape) for w in layer.trainable_weights) == [(8, 4), (10, 4)]
    positions = layer._positions.get_weights()[0]
    np.testing.assert_allclose(y, _tokens(layer)[IDS] * 2.0 + positions[None, :5], **FLOAT32)
    # The same token at different positions gets different vectors.
    same = ops.convert_to_numpy(layer(np.array([[4, 4, 4]], "int32")))
    assert not np.allclose(same[0, 0], same[0, 1])


def test_no_positions_adds_nothing():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, positions="none")
    y = ops.convert_to_numpy(layer(IDS))
    np.testing.assert_allclose(y, _tokens(layer)[IDS] * 2.0, **FLOAT32)
    same = ops.convert_to_numpy(layer(np.array([[4, 4, 4]], "int32")))
    np.testing.assert_array_equal(same[0, 0], same[0, 2])  # order-blind without positions
    assert len(layer.weights) == 1


def test_compute_mask():
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8)
    np.testing.assert_array_equal(ops.convert_to_numpy(layer.compute_mask(IDS)), IDS != 0)
    no_mask = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, mask_zero=False)
    assert no_mask.compute_mask(IDS) is None


def test_mask_is_attached_to_eager_outputs():
    y = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8)(IDS)
    np.testing.assert_array_equal(ops.convert_to_numpy(y._keras_mask), IDS != 0)
    unmasked = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, mask_zero=False)(IDS)
    assert getattr(unmasked, "_keras_mask", None) is None


def test_mask_propagates_in_a_functional_model():
    """A downstream mask-aware layer (average pooling) ignores the padding positions."""
    ids = keras.Input((5,), dtype="int32")
    embedding = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, name="embedding")
    model = keras.Model(ids, keras.layers.GlobalAveragePooling1D()(embedding(ids)))
    pooled = ops.convert_to_numpy(model(IDS))
    embedded = ops.convert_to_numpy(embedding(IDS))
    np.testing.assert_allclose(pooled[0], embedded[0, :3].mean(0), **FLOAT32)
    np.testing.assert_allclose(pooled[1], embedded[1].mean(0), **FLOAT32)
    assert not np.allclose(pooled[0], embedded[0].mean(0), atol=1e-4)


def test_unknown_positions_raise_with_choices():
    with pytest.raises(ComponentError, match="'rotated'") as error:
        TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, positions="rotated")
    for kind in BUILTINS["positions"]:
        assert kind in str(error.value)


def test_learned_positions_keep_their_weight_path():
    """Checkpoints of runs with positions=learned name the table embedding/positions/embeddings."""
    layer = TokenAndPositionEmbedding(
        vocab_size=10, d_model=4, max_length=8, positions="learned", name="embedding"
    )
    layer.build((2, 5))
    assert [weight.path for weight in layer.weights] == [
        "embedding/tokens/embeddings",
        "embedding/positions/embeddings",
    ]


@pytest.mark.parametrize("positions", ["none", "rotary"])
def test_nothing_is_added_without_additive_positions(positions):
    """Rotary positions act inside self-attention: the embedding is the scaled tokens alone."""
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, positions=positions)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(IDS)), _tokens(layer)[IDS] * 2.0, **FLOAT32)
    assert len(layer.weights) == 1


@pytest.mark.parametrize("positions", list(BUILTINS["positions"]))
def test_config_round_trip(positions):
    layer = TokenAndPositionEmbedding(
        vocab_size=10,
        d_model=4,
        max_length=8,
        positions=positions,
        scale=False,
        mask_zero=False,
        name="embedding",
    )
    y = layer(IDS)
    config = layer.get_config()
    assert {
        k: config[k] for k in ("vocab_size", "d_model", "max_length", "positions", "scale", "mask_zero")
    } == {
        "vocab_size": 10,
        "d_model": 4,
        "max_length": 8,
        "positions": positions,
        "scale": False,
        "mask_zero": False,
    }
    clone = TokenAndPositionEmbedding.from_config(config)
    assert clone.get_config() == config
    clone.build((2, 5))
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(ops.convert_to_numpy(clone(IDS)), ops.convert_to_numpy(y), **FLOAT32)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
def test_keras_save_load(tmp_path, positions):
    ids = keras.Input((5,), dtype="int32")
    embedding = TokenAndPositionEmbedding(
        vocab_size=10, d_model=4, max_length=8, positions=positions, name="embedding"
    )
    model = keras.Model(ids, keras.layers.GlobalAveragePooling1D()(embedding(ids)))
    before = ops.convert_to_numpy(model(IDS))
    path = tmp_path / "embedding.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert isinstance(loaded.get_layer("embedding"), TokenAndPositionEmbedding)
    np.testing.assert_allclose(ops.convert_to_numpy(loaded(IDS)), before, **FLOAT32)
    for a, b in zip(embedding.get_weights(), loaded.get_layer("embedding").get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "none"])
def test_start_index_embeds_one_token_at_its_position(positions):
    """A cached decoder embeds the single new token at position t; it must get row t of the full call."""
    layer = TokenAndPositionEmbedding(vocab_size=10, d_model=4, max_length=8, positions=positions)
    ids = np.array([[1, 5, 7, 2, 9], [3, 4, 0, 0, 0]], dtype="int32")
    full = ops.convert_to_numpy(layer(ids))
    for t in range(ids.shape[1]):
        one = ops.convert_to_numpy(layer(ids[:, t : t + 1], start_index=t))
        np.testing.assert_allclose(one[:, 0], full[:, t], **FLOAT32)
