"""Rank collapse, attention entropy and per-layer gradient norms on inputs with known answers."""

import numpy as np
import pytest

from tx_keras.diagnostics import attention_entropy, gradient_norms_by_layer, layer_of, rank_collapse_ratio
from tx_keras.models import ModelConfig, Transformer
from tx_keras.training.masked_loss import MaskedCrossEntropy


def test_rank_collapse_is_zero_for_identical_tokens_and_clearly_positive_for_random_ones():
    row = np.random.default_rng(0).normal(size=16)
    assert rank_collapse_ratio(np.tile(row, (10, 1))) == pytest.approx(0.0, abs=1e-12)
    assert rank_collapse_ratio(np.random.default_rng(1).normal(size=(10, 16))) > 0.5


def test_rank_collapse_norm_by_hand():
    hidden = np.array([[1.0, 2.0], [3.0, 6.0]])  # mean (2, 4): residual [[-1, -2], [1, 2]]
    # ||H||_1 = max column sum = 8, ||H||_inf = max row sum = 9; the residual's are 4 and 3.
    assert rank_collapse_ratio(hidden) == pytest.approx(np.sqrt(4 * 3) / np.sqrt(8 * 9))


def test_rank_collapse_ignores_padding_and_averages_sentences():
    rng = np.random.default_rng(2)
    batch = rng.normal(size=(2, 6, 8))
    mask = np.ones((2, 6), bool)
    mask[0, 4:] = False
    batch[0, 4:] = 1e6  # padding garbage must not count
    expected = (rank_collapse_ratio(batch[0, :4]) + rank_collapse_ratio(batch[1])) / 2
    assert rank_collapse_ratio(batch, mask) == pytest.approx(expected)


def test_attention_entropy_uniform_and_one_hot():
    uniform = np.full((1, 1, 3, 4), 0.25)
    one_hot = np.zeros((1, 1, 3, 4))
    one_hot[..., 0] = 1.0
    heads = attention_entropy(np.concatenate([uniform, one_hot], axis=1))
    np.testing.assert_allclose(heads, [np.log(4), 0.0], atol=1e-12)
    padded = uniform.copy()
    padded[0, 0, 2] = [1.0, 0, 0, 0]  # a padded query row that must be ignored
    assert attention_entropy(padded, np.array([[True, True, False]]))[0] == pytest.approx(np.log(4))


@pytest.mark.parametrize(
    ("path", "layer"),
    [
        ("transformer/encoder/block_2/self_attention/query_kernel", "encoder/layer_2"),
        ("transformer/decoder/block_10/ffn/hidden/kernel", "decoder/layer_10"),
        ("transformer/decoder/embedding/tokens/embeddings", "decoder/embedding"),
        ("transformer/encoder/final_norm/gamma", "encoder/final_norm"),
        ("transformer/logits/kernel", "logits"),
    ],
)
def test_layer_of_groups_weights_by_layer(path, layer):
    assert layer_of(path) == layer


def test_gradient_norms_cover_every_layer_and_are_finite_and_positive():
    model = Transformer(
        ModelConfig(num_encoder_layers=2, num_decoder_layers=2, d_model=16, num_heads=2, dff=32), 9, 9, 6, 6
    )
    model.compile(loss=MaskedCrossEntropy())
    rng = np.random.default_rng(0)
    source, target = rng.integers(1, 9, (4, 6)), rng.integers(1, 9, (4, 7))
    norms = gradient_norms_by_layer(model, (source, target[:, :-1]), target[:, 1:])
    assert set(norms) == {
        "encoder/embedding",
        "encoder/layer_1",
        "encoder/layer_2",
        "decoder/embedding",
        "decoder/layer_1",
        "decoder/layer_2",
        "logits",
    }
    assert all(np.isfinite(value) and value > 0 for value in norms.values())
