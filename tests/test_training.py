"""Schedule, masked loss and accuracy, greedy decoding and exact-match."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tx_keras.data import Vocabulary
from tx_keras.decoding.compiled_decoder import decode_in_batches
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.evaluation.exact_match import exact_match
from tx_keras.models import ModelConfig, Transformer
from tx_keras.most_likely import most_likely
from tx_keras.training.step.learning_rate import NoamSchedule
from tx_keras.training.step.masked_accuracy import MaskedAccuracy
from tx_keras.training.step.masked_loss import MaskedCrossEntropy


def test_noam_schedule_warms_up_then_decays():
    schedule = NoamSchedule(d_model=64, warmup_steps=100, scale=2.0)
    rates = np.array([float(schedule(step)) for step in range(0, 400)])
    assert np.argmax(rates) == 99  # step 100, counted from 1
    assert rates[99] == pytest.approx(schedule.peak(), rel=1e-5)
    assert rates[99] == pytest.approx(2.0 / np.sqrt(64 * 100), rel=1e-5)
    assert np.all(np.diff(rates[:100]) > 0) and np.all(np.diff(rates[100:]) < 0)
    assert rates[399] == pytest.approx(2.0 / 8 / np.sqrt(400), rel=1e-5)
    assert NoamSchedule.from_config(schedule.get_config()).get_config() == schedule.get_config()


def test_masked_loss_ignores_padding_positions():
    labels = np.array([[5, 6, 2, 0, 0]], dtype="int32")
    logits = np.random.default_rng(0).normal(size=(1, 5, 8)).astype("float32")
    changed = logits.copy()
    changed[:, 3:] += 100.0  # garbage at padded positions
    loss = MaskedCrossEntropy()
    value = float(loss(labels, logits))
    assert float(loss(labels, changed)) == pytest.approx(value, rel=1e-6)
    log_probs = logits[0, :3] - np.log(np.exp(logits[0, :3]).sum(-1, keepdims=True))
    assert value == pytest.approx(-np.mean(log_probs[np.arange(3), labels[0, :3]]), rel=1e-5)


def test_label_smoothing_raises_the_loss_of_a_confident_correct_prediction():
    labels = np.array([[1, 2]], dtype="int32")
    logits = np.full((1, 2, 4), -10.0, dtype="float32")
    logits[0, 0, 1] = logits[0, 1, 2] = 10.0
    assert float(MaskedCrossEntropy(0.1)(labels, logits)) > float(MaskedCrossEntropy()(labels, logits)) + 0.5


def test_label_smoothed_loss_and_gradient_are_the_dense_smoothed_targets_cross_entropy():
    """-sum(targets * log_softmax) with targets (1 - e) one_hot + e / V, as the paper smooths labels: in value
    and in gradient (softmax - targets, averaged over the real tokens only)."""
    rng = np.random.default_rng(3)
    labels = np.array([[5, 1, 7, 2, 0], [3, 3, 2, 0, 0]], dtype="int32")
    logits = (rng.normal(size=(2, 5, 9)) * 4).astype("float32")
    smoothing, vocab = 0.1, 9
    targets = (1 - smoothing) * np.eye(vocab)[labels] + smoothing / vocab
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    mask = labels != 0
    expected = -(targets * log_probs).sum(-1)[mask].mean()
    tensor = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(tensor)
        value = MaskedCrossEntropy(smoothing)(labels, tensor)
    gradient = tape.gradient(value, tensor).numpy()
    assert float(value) == pytest.approx(expected, rel=1e-5)
    expected_gradient = (np.exp(log_probs) - targets) * mask[..., None] / mask.sum()
    np.testing.assert_allclose(gradient, expected_gradient, atol=1e-6)


def test_masked_accuracy_counts_real_tokens_over_batches():
    metric = MaskedAccuracy()
    one_hot = np.eye(5, dtype="float32")
    metric.update_state(np.array([[1, 2, 0]]), one_hot[[[1, 3, 0]]])  # 1 of 2 real tokens right
    metric.update_state(np.array([[4, 4, 4]]), one_hot[[[4, 4, 4]]])  # 3 of 3
    assert float(metric.result()) == pytest.approx(4 / 5)


def test_masked_accuracy_predicts_as_argmax_ties_and_bfloat16_included():
    """`most_likely` (top_k) in place of argmax: the same id on ties (the lowest), and in bfloat16."""
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(3, 4, 50)).astype("float32")
    logits[0, 0, [7, 3, 30]] = 9.0  # a three-way tie: argmax takes id 3
    labels = np.argmax(logits, axis=-1)
    labels[1, 2] = (labels[1, 2] + 1) % 50  # one wrong
    labels[2, 3] = 0  # one padding position
    for dtype in ("float32", "bfloat16"):
        metric = MaskedAccuracy()
        metric.update_state(labels, ops.cast(logits, dtype))
        assert float(metric.result()) == pytest.approx(10 / 11)
    assert np.array_equal(ops.convert_to_numpy(most_likely(logits)), np.argmax(logits, axis=-1))


def _tiny_model():
    keras.utils.set_random_seed(0)
    model = Transformer(
        ModelConfig(num_encoder_layers=1, num_decoder_layers=1, d_model=16, num_heads=2, dff=32),
        source_vocab_size=9,
        target_vocab_size=9,
        max_source_length=6,
        max_target_length=7,
    )
    model.build(((None, 6), (None, 7)))
    return model


def test_greedy_decoder_matches_step_by_step_argmax():
    model = _tiny_model()
    source = np.array([[4, 5, 6, 2, 0, 0], [7, 8, 2, 0, 0, 0]], dtype="int32")
    decoded = decode_in_batches(greedy_decoder(model, 7), source, batch_size=1)
    assert decoded.shape == (2, 7)
    for row, sentence in zip(decoded, source, strict=True):
        prefix = [Vocabulary.SOS]
        for step in range(7):
            padded = np.array([prefix + [0] * (7 - len(prefix))], dtype="int32")
            logits = ops.convert_to_numpy(model((sentence[None], padded)))
            word = int(np.argmax(logits[0, step]))
            assert row[step] == word
            if word == Vocabulary.EOS:
                assert np.all(row[step + 1 :] == 0)  # nothing after EOS
                break
            prefix.append(word)


def test_exact_match_compares_words_up_to_eos():
    vocab = Vocabulary(["a", "b", "c"])
    a, b, c, eos, sos = 4, 5, 6, Vocabulary.EOS, Vocabulary.SOS
    targets = np.array([[sos, a, b, eos, 0], [sos, c, eos, 0, 0]])
    predicted = np.array([[a, b, eos, c, c], [c, a, eos, 0, 0]])  # words after EOS do not matter
    assert exact_match(predicted, targets, vocab) == 0.5
