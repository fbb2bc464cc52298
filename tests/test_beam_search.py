"""Beam search: width 1 is greedy, wider beams find translations at least as probable."""

import numpy as np
import pytest
import tensorflow as tf

from tests.float_tolerance import FLOAT32
from tx_keras.data import Vocabulary
from tx_keras.decoding.beam_search import beam_search_decoder, length_penalty
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.compiled_decoder import decode_in_batches
from tx_keras.models import Transformer


def _log_probability(model: Transformer, source: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Sum of log p(word) of each row's words through EOS, teacher-forced."""
    inputs = np.concatenate([np.full((len(ids), 1), Vocabulary.SOS), ids[:, :-1]], axis=1).astype("int32")
    log_probs = tf.nn.log_softmax(model((source, inputs))).numpy()
    picked = np.take_along_axis(log_probs, ids[..., None], axis=-1)[..., 0]
    through_eos = np.cumsum(ids == Vocabulary.EOS, axis=1) - (ids == Vocabulary.EOS) == 0
    return np.where(through_eos, picked, 0.0).sum(axis=1)


def test_length_penalty_is_gnmts():
    assert float(length_penalty(tf.constant(1), 0.0)) == 1.0
    assert float(length_penalty(tf.constant(7), 0.6)) == pytest.approx(2.0**0.6)


def test_width_one_is_greedy(copy_model):
    model, source = copy_model
    length = model.max_target_length
    greedy, greedy_attention = cached_greedy_decoder(model, length, return_attention_scores=True)(source)
    beam, beam_attention = beam_search_decoder(
        model, length, width=1, alpha=0.6, return_attention_scores=True
    )(source)
    np.testing.assert_array_equal(beam.numpy(), greedy.numpy())
    np.testing.assert_allclose(beam_attention.numpy(), greedy_attention.numpy(), **FLOAT32)


def test_wider_beam_finds_at_least_as_probable_translations(copy_model):
    model, source = copy_model
    length = model.max_target_length
    greedy = decode_in_batches(cached_greedy_decoder(model, length), source)
    beam = decode_in_batches(beam_search_decoder(model, length, width=4, alpha=0.0), source)
    assert np.all((beam == Vocabulary.EOS).sum(axis=1) == 1), "every hypothesis chosen has ended"
    assert np.all(_log_probability(model, source, beam) >= _log_probability(model, source, greedy) - 1e-4)


def test_beam_attention_follows_the_chosen_hypothesis(copy_model):
    model, source = copy_model
    ids, attention = beam_search_decoder(
        model, model.max_target_length, 3, 0.6, return_attention_scores=True
    )(source[:3])
    ids, attention = ids.numpy(), attention.numpy()
    inputs = np.concatenate([np.full((3, 1), Vocabulary.SOS), ids[:, :-1]], axis=1).astype("int32")
    _, maps, _ = model.trace((source[:3], inputs))
    for row in range(3):
        steps = int(np.argmax(ids[row] == Vocabulary.EOS)) + 1
        np.testing.assert_allclose(
            attention[row, -1, :, :steps], maps["cross/layer_2"].numpy()[row, :, :steps], **FLOAT32
        )


def test_beam_width_is_checked(copy_model):
    model, _ = copy_model
    with pytest.raises(ValueError, match="width=0 must be >= 1"):
        beam_search_decoder(model, 4, width=0)
    with pytest.raises(ValueError, match="exceeds the target vocabulary"):
        beam_search_decoder(model, 4, width=1000)
