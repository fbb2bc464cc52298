"""Encoder, decoder and Transformer: shapes, attention maps, ablation switches, serialization."""

import dataclasses
from pathlib import Path

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.models import Decoder, Encoder, EncoderBlock, ModelConfig, Transformer

SIZES = ModelConfig(d_model=16, num_heads=4, dff=32)


def _ids(batch, length, vocab, pad_from=None, seed=0):
    ids = np.random.default_rng(seed).integers(1, vocab, size=(batch, length)).astype("int32")
    if pad_from is not None:
        ids[:, pad_from:] = 0
    return ids


def _transformer(**overrides):
    config = dataclasses.replace(SIZES, **{"num_encoder_layers": 2, "num_decoder_layers": 3, **overrides})
    return Transformer(
        config, source_vocab_size=11, target_vocab_size=13, max_source_length=7, max_target_length=6
    )


def test_encoder_and_decoder_shapes():
    encoder = Encoder(SIZES, 11, 7, num_layers=2)
    decoder = Decoder(SIZES, 13, 6, num_layers=3)
    source, target = _ids(2, 7, 11, pad_from=5), _ids(2, 6, 13)
    memory, trace = encoder(source, return_attention_scores=True)
    weights = trace["self_attention"]
    assert memory.shape == (2, 7, 16) and len(weights) == 2 and weights[0].shape == (2, 4, 7, 7)
    assert [tuple(output.shape) for output in trace["outputs"]] == [(2, 7, 16)] * 2
    hidden, trace = decoder(target, memory, source_mask=source != 0, return_attention_scores=True)
    self_weights, cross_weights = trace["self_attention"], trace["cross_attention"]
    assert hidden.shape == (2, 6, 16)
    assert len(self_weights) == len(cross_weights) == 3
    assert self_weights[0].shape == (2, 4, 6, 6) and cross_weights[0].shape == (2, 4, 6, 7)
    # Cross-attention never looks at padded source words; causal self-attention never at the future.
    assert np.all(ops.convert_to_numpy(cross_weights[0])[..., 5:] == 0)
    assert np.all(np.triu(ops.convert_to_numpy(self_weights[2]), k=1) == 0)


def test_transformer_returns_every_attention_map_without_changing_logits():
    model = _transformer()
    source, target = _ids(2, 7, 11, pad_from=6), _ids(2, 6, 13)
    logits = model((source, target))
    logits_again, attention = model((source, target), return_attention_scores=True)
    assert logits.shape == (2, 6, 13)
    np.testing.assert_array_equal(ops.convert_to_numpy(logits), ops.convert_to_numpy(logits_again))
    expected = {f"encoder_self/layer_{i}" for i in (1, 2)}
    expected |= {f"{kind}/layer_{i}" for kind in ("decoder_self", "cross") for i in (1, 2, 3)}
    assert set(attention) == expected
    assert attention["cross/layer_3"].shape == (2, 4, 6, 7)
    for weights in attention.values():
        np.testing.assert_allclose(ops.convert_to_numpy(ops.sum(weights, axis=-1)), 1.0, **FLOAT32)


def test_future_target_words_do_not_change_earlier_logits():
    model = _transformer()
    source, target = _ids(1, 7, 11), _ids(1, 6, 13)
    changed = target.copy()
    changed[0, 4:] = (changed[0, 4:] % 12) + 1
    before = ops.convert_to_numpy(model((source, target)))
    after = ops.convert_to_numpy(model((source, changed)))
    np.testing.assert_allclose(before[:, :4], after[:, :4], **FLOAT32)
    assert not np.allclose(before[:, 4:], after[:, 4:])


def test_bare_block_is_exactly_attention():
    """residual=False, norm=none, ffn=False: the block output is multi-head attention and nothing else."""
    block = EncoderBlock(dataclasses.replace(SIZES, residual=False, norm="none", ffn=False))
    x = np.random.default_rng(1).normal(size=(2, 5, 16)).astype("float32")
    y = ops.convert_to_numpy(block(x))
    attention = block._self_attention
    q = np.einsum("btd,dhk->bhtk", x, ops.convert_to_numpy(attention.query_kernel))
    q += ops.convert_to_numpy(attention.query_bias)[:, None]
    k = np.einsum("btd,dhk->bhtk", x, ops.convert_to_numpy(attention.key_kernel))
    k += ops.convert_to_numpy(attention.key_bias)[:, None]
    v = np.einsum("btd,dhk->bhtk", x, ops.convert_to_numpy(attention.value_kernel))
    v += ops.convert_to_numpy(attention.value_bias)[:, None]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(4)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.einsum("bhtk,hkd->btd", weights @ v, ops.convert_to_numpy(attention.output_kernel))
    expected += ops.convert_to_numpy(attention.output_bias)
    np.testing.assert_allclose(y, expected, **FLOAT32)
    assert len(block.weights) == 8  # Wq, Wk, Wv, W_o and their biases: no norm, no FFN


@pytest.mark.parametrize("norm", ["post", "pre", "none"])
@pytest.mark.parametrize("residual", [True, False])
def test_ablation_switches_change_the_parameter_count(norm, residual):
    with_ffn = _transformer(norm=norm, residual=residual)
    without_ffn = _transformer(norm=norm, residual=residual, ffn=False)
    source, target = _ids(1, 7, 11), _ids(1, 6, 13)
    with_ffn((source, target))
    without_ffn((source, target))
    ffn_params = 5 * (16 * 32 + 32 + 32 * 16 + 16)  # 2 encoder + 3 decoder FFNs
    assert with_ffn.count_params() - without_ffn.count_params() == ffn_params + (
        5 * 2 * 16 if norm != "none" else 0
    )  # + their LayerNorms


def test_invalid_options_fail_at_construction():
    with pytest.raises(ValueError, match="num_heads=3"):
        _transformer(num_heads=3)
    with pytest.raises(ValueError, match="post, pre, none"):
        _transformer(norm="middle")
    with pytest.raises(ValueError, match="fused, looped"):
        _transformer(attention_impl="sparse")
    with pytest.raises(ValueError, match="num_(encoder_)?layers=0"):  # ModelConfig or the stack refuses
        _transformer(num_encoder_layers=0)


@pytest.mark.parametrize(
    "overrides", [{}, {"norm": "pre", "positions": "learned", "attention_impl": "looped"}]
)
def test_transformer_keras_file_round_trip(tmp_path, overrides):
    model = _transformer(**overrides)
    source, target = _ids(2, 7, 11, pad_from=5), _ids(2, 6, 13)
    expected = ops.convert_to_numpy(model((source, target)))
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert loaded.get_config() == model.get_config()
    np.testing.assert_allclose(ops.convert_to_numpy(loaded((source, target))), expected, **FLOAT32)


def test_one_training_step_moves_every_weight_and_lowers_the_loss():
    keras.utils.set_random_seed(0)
    # no dropout: the step's loss is the evaluated one; one block a side has every kind of weight
    model = _transformer(num_encoder_layers=1, num_decoder_layers=1)
    source, target = _ids(16, 7, 11, seed=2), _ids(16, 7, 13, seed=3)
    model.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    inputs, labels = (source, target[:, :-1]), target[:, 1:]
    before = model.evaluate(inputs, labels, verbose=0)
    weights = [ops.convert_to_numpy(variable).copy() for variable in model.trainable_variables]
    loss = float(model.train_on_batch(inputs, labels))
    assert int(model.optimizer.iterations) == 1
    assert np.isfinite(loss) and loss == pytest.approx(before, rel=1e-5)  # computed before the update
    unmoved = [
        variable.path
        for variable, old in zip(model.trainable_variables, weights, strict=True)
        if np.array_equal(ops.convert_to_numpy(variable), old)
    ]
    assert unmoved == []  # every weight gets a gradient: none is cut off from the loss
    # Adam's first step moves each weight by ~lr against its gradient's sign: at 1e-3 that goes downhill
    # (at 1e-2 it overshot here), so the same batch scores better after the step
    assert model.evaluate(inputs, labels, verbose=0) < before


def test_a_model_keras_file_saved_with_flat_knobs_still_loads_with_the_same_logits(tmp_path):
    """tests/fixtures/transformer_flat_config.keras was saved before ModelConfig (pre-LN, gelu, learned
    positions, fused q/k/v): its flat knobs become the config, its weights land where they were."""
    fixtures = Path(__file__).parent / "fixtures"
    expected = np.load(fixtures / "transformer_flat_config_logits.npz")
    loaded = keras.models.load_model(fixtures / "transformer_flat_config.keras", safe_mode=True)
    assert loaded.config == ModelConfig(
        num_encoder_layers=1, num_decoder_layers=1, d_model=8, num_heads=2, dff=16,
        norm="pre", activation="gelu", positions="learned", fused_qkv=True,
    )  # fmt: skip
    logits = ops.convert_to_numpy(loaded((expected["source"], expected["target"])))
    # Recorded on the AVX2 EPYC: another CPU or kernel library sums in another order (float_tolerance.py).
    np.testing.assert_allclose(logits, expected["logits"], **FLOAT32)
    assert loaded.get_config()["model_config"] == dataclasses.asdict(loaded.config)
    # Nothing changed at all: the old file and the same model saved by today's code, both run here, agree
    # bit for bit (one machine, one computation).
    loaded.save(tmp_path / "today.keras")
    today = keras.models.load_model(tmp_path / "today.keras", safe_mode=True)
    assert today.get_config() == loaded.get_config()
    today_logits = ops.convert_to_numpy(today((expected["source"], expected["target"])))
    np.testing.assert_array_equal(today_logits, logits)


def test_stacks_and_blocks_round_trip_their_config():
    config = dataclasses.replace(SIZES, norm="pre", ffn=False)
    for layer in (
        EncoderBlock(config),
        Encoder(config, 11, 7, num_layers=2),
        Decoder(config, 13, 6, num_layers=1),
    ):
        copy = type(layer).from_config(layer.get_config())
        assert copy.config == config and copy.get_config() == layer.get_config()
