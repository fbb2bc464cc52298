"""Training on the real positions only (real_positions.py): logits at the real target positions and FFN
sublayers on the real rows give the same loss, weights and metrics as computing every position, and
every position is computed wherever leaving padding out would change what was asked for."""

import keras
import numpy as np
import pytest
from keras import ops

import tx_keras.models.encoder as encoder_module
import tx_keras.models.real_positions as real_positions
import tx_keras.models.transformer as transformer_module
from tests.float_tolerance import FLOAT32
from tx_keras.models import ModelConfig, Transformer
from tx_keras.models.real_positions import can_gather, flat_index, gathered_logits
from tx_keras.training.step.masked_accuracy import MaskedAccuracy
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.token_mean_loss import TokenMeanLoss

VOCAB = 17


def _batch(seed: int = 0):
    """Rows padded after 2..7 tokens (sources and targets apart), as length buckets give."""
    rng = np.random.default_rng(seed)

    def ids(length):
        rows = rng.integers(1, VOCAB, (6, length)).astype("int32")
        rows[np.arange(length)[None, :] >= rng.integers(2, length + 1, 6)[:, None]] = 0
        return rows

    source, target = ids(7), ids(8)
    return (source, target[:, :-1]), target[:, 1:]


def _model(tie: bool = False, norm: str = "post", **compile_args) -> Transformer:
    keras.utils.set_random_seed(0)
    config = ModelConfig(
        num_encoder_layers=1, num_decoder_layers=1, d_model=16, num_heads=4, dff=32, dropout=0.0,
        tie_embeddings=tie, norm=norm,
    )  # fmt: skip
    model = Transformer(config, VOCAB, VOCAB, max_source_length=7, max_target_length=7)
    model(_batch()[0])  # built here, from this seed: two models made in turn start alike
    compile_args.setdefault("loss", MaskedCrossEntropy(0.1))
    compile_args.setdefault("metrics", [TokenMeanLoss(0.1), MaskedAccuracy()])
    model.compile(keras.optimizers.Adam(1e-2), **compile_args)
    return model


def _gathers(monkeypatch, module=transformer_module, name="at_real_positions") -> list:
    """Records each gather the traced steps make: the static row count of what the wrapped function
    returns (None: the count of real positions, known when the step runs)."""
    seen = []
    original = getattr(module, name)

    def recording(*args):
        rows = original(*args)
        seen.append(rows.shape[0] if name == "at_real_positions" else rows.shape)
        return rows

    monkeypatch.setattr(module, name, recording)
    return seen


def test_the_gathered_rows_are_the_real_ones_then_padding_up_to_a_row_class(monkeypatch):
    """Real positions in order, then the first padding positions, as many as round the count up to a
    multiple of the row class, and never more rows than the batch has."""
    real = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], bool)  # 6 real of 12
    monkeypatch.setattr(real_positions, "row_class", lambda: 4)
    assert ops.convert_to_numpy(flat_index(real)).tolist() == [0, 1, 4, 8, 9, 10, 2, 3]
    monkeypatch.setattr(real_positions, "row_class", lambda: 1)
    assert ops.convert_to_numpy(flat_index(real)).tolist() == [0, 1, 4, 8, 9, 10]
    monkeypatch.setattr(real_positions, "row_class", lambda: 64)
    assert ops.convert_to_numpy(flat_index(real)).tolist() == [0, 1, 4, 8, 9, 10, 2, 3, 5, 6, 7, 11]


# row class 1: exact counts; 8: padding rows fill each gather up. Two of the four combinations: each row
# class and each (tie, norm) setting once keeps the default test run's time (~12 s each alone on Zen 4).
@pytest.mark.parametrize(
    ("tie", "norm", "row_class"),
    [pytest.param(False, "post", 8, marks=pytest.mark.slow), (True, "pre", 1)],
)
def test_training_on_gathered_rows_matches_full_logits_step_for_step(monkeypatch, tie, norm, row_class):
    monkeypatch.setattr(real_positions, "row_class", lambda: row_class)
    inputs, labels = _batch()
    full = _model(tie, norm)
    full.objective_ignores_padding = False  # as if the objective counted padding: full logits
    gathered = _model(tie, norm)
    assert gathered.objective_ignores_padding and can_gather(gathered, None)
    seen = _gathers(monkeypatch)
    packed = _gathers(monkeypatch, encoder_module, "on_real_rows")
    full_logs = [full.train_on_batch(inputs, labels, return_dict=True) for _ in range(3)]
    assert seen == [] and packed == []
    gathered_logs = [gathered.train_on_batch(inputs, labels, return_dict=True) for _ in range(3)]
    # per trace: the logits, then the labels for the loss and for the metrics, at a dynamic row count
    assert len(seen) >= 3 and len(seen) % 3 == 0 and set(seen) == {None}
    # and every block's FFN sublayer (1 encoder, 1 decoder block) on the real rows, put back in place
    assert len(packed) == 2 * len(seen) // 3 and {tuple(shape) for shape in packed} == {(6, 7, 16)}
    for want, got in zip(full_logs, gathered_logs, strict=True):
        assert got["loss"] == pytest.approx(want["loss"], rel=1e-5)
        assert got["accuracy"] == pytest.approx(want["accuracy"], abs=1e-6)
    assert full_logs[-1]["loss"] < full_logs[0]["loss"]  # the steps did train
    for want, got in zip(full.trainable_variables, gathered.trainable_variables, strict=True):
        np.testing.assert_allclose(ops.convert_to_numpy(got), ops.convert_to_numpy(want), **FLOAT32)


@pytest.mark.parametrize(("onednn", "multiple"), [(True, 64), (None, 64), (False, 1)])
def test_rows_are_rounded_where_onednn_builds_a_kernel_per_shape(monkeypatch, onednn, multiple):
    monkeypatch.setattr(real_positions, "onednn_enabled", lambda: onednn)
    assert real_positions.row_class() == multiple


def test_only_a_training_step_returns_gathered_rows(monkeypatch):
    monkeypatch.setattr(real_positions, "row_class", lambda: 1)
    inputs, _ = _batch()
    model = _model()
    real = int(np.count_nonzero(inputs[1]))
    assert model(inputs, training=True).shape == (6, 7, VOCAB)  # outside a step: full logits
    with gathered_logits(True):
        gathered = model(inputs, training=True)
        assert model(inputs, training=False).shape == (6, 7, VOCAB)  # evaluation, decoding, export
        with gathered_logits(False):
            assert model(inputs, training=True).shape == (6, 7, VOCAB)
        assert model(inputs, training=True).shape == (real, VOCAB)
    full = ops.convert_to_numpy(model(inputs, training=True)).reshape(-1, VOCAB)
    np.testing.assert_allclose(ops.convert_to_numpy(gathered), full[inputs[1].reshape(-1) != 0], **FLOAT32)


def test_gathered_logits_padded_to_a_row_class_hold_the_first_padding_positions(monkeypatch):
    monkeypatch.setattr(real_positions, "row_class", lambda: 8)
    inputs, _ = _batch()
    model = _model()
    full = ops.convert_to_numpy(model(inputs, training=True)).reshape(-1, VOCAB)
    with gathered_logits(True):
        gathered = ops.convert_to_numpy(model(inputs, training=True))
    real = inputs[1].reshape(-1) != 0
    rows = -(-int(real.sum()) // 8) * 8
    assert gathered.shape == (rows, VOCAB) and rows > real.sum()
    want = np.concatenate([full[real], full[~real][: rows - int(real.sum())]])
    np.testing.assert_allclose(gathered, want, **FLOAT32)


def test_a_loss_that_counts_padding_keeps_full_logits(monkeypatch):
    """Keras' SparseCategoricalCrossentropy averages over every position, padding labels included: the
    step must descend that objective, not the padding-free one."""
    inputs, labels = _batch()
    model = _model(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=None)
    assert not model.objective_ignores_padding
    seen = _gathers(monkeypatch)
    logits = ops.convert_to_numpy(model(inputs))
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    every_position = -np.take_along_axis(log_probs, labels[..., None], -1).mean()
    assert float(model.train_on_batch(inputs, labels)) == pytest.approx(every_position, rel=1e-5)
    assert seen == []


@pytest.mark.parametrize(
    "compile_args",
    [
        {"metrics": ["accuracy"]},  # Keras' accuracy counts padding positions
        {"weighted_metrics": [MaskedAccuracy()]},
        {"jit_compile": True},  # XLA compiles fixed shapes
    ],
)
def test_what_gathering_would_change_keeps_full_logits(compile_args):
    assert not can_gather(_model(**compile_args), None)


def test_per_sample_weights_keep_full_logits(monkeypatch):
    inputs, labels = _batch()
    model = _model()
    seen = _gathers(monkeypatch)
    model.train_on_batch(inputs, labels, sample_weight=np.ones(labels.shape, "float32"))
    assert seen == [] and not can_gather(model, np.ones(labels.shape))
