"""Rank collapse, attention entropy and per-layer gradient norms on inputs with known answers."""

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.diagnostics import attention_entropy, gradient_norms_by_layer, layer_of, rank_collapse_ratio
from tx_keras.models import ModelConfig, Transformer
from tx_keras.training.step.masked_loss import MaskedCrossEntropy


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


def test_gradient_norms_are_the_l2_norms_of_each_layers_loss_gradient():
    """Pinned to the global L2 norm of a GradientTape's gradients, the weights grouped by their path here."""
    model = Transformer(
        ModelConfig(num_encoder_layers=2, num_decoder_layers=2, d_model=16, num_heads=2, dff=32), 9, 9, 6, 6
    )
    model.compile(loss=MaskedCrossEntropy())
    rng = np.random.default_rng(0)
    source, target = rng.integers(1, 9, (4, 6)), rng.integers(1, 9, (4, 7))
    inputs, labels = (source, target[:, :-1]), target[:, 1:]
    norms = gradient_norms_by_layer(model, inputs, labels)
    with tf.GradientTape() as tape:
        loss = MaskedCrossEntropy()(labels, model(inputs, training=False))
    # Dense: an embedding's gradient comes as IndexedSlices, whose repeated rows the dense gradient sums.
    gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]
    top = model.name  # "transformer", or "transformer_N" after other models in this process
    prefixes = {
        "encoder/embedding": f"{top}/encoder/embedding/",
        "encoder/layer_1": f"{top}/encoder/block_1/",
        "encoder/layer_2": f"{top}/encoder/block_2/",
        "decoder/embedding": f"{top}/decoder/embedding/",
        "decoder/layer_1": f"{top}/decoder/block_1/",
        "decoder/layer_2": f"{top}/decoder/block_2/",
        "logits": f"{top}/logits/",
    }
    expected = {
        layer: float(
            tf.linalg.global_norm(
                [
                    g
                    for v, g in zip(model.trainable_variables, gradients, strict=True)
                    if v.path.startswith(prefix)
                ]
            )
        )
        for layer, prefix in prefixes.items()
    }
    assert all(v.path.startswith(tuple(prefixes.values())) for v in model.trainable_variables)  # all counted
    assert norms == pytest.approx(expected, rel=1e-5)
    assert min(expected.values()) > 1e-4  # every layer has a gradient to measure
