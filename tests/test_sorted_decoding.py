"""Length-sorted decoding: the same output as decoding in corpus order, each row back in its place."""

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.compiled_decoder import decode_in_batches
from tx_keras.evaluation import decode_sorted


def test_greedy_and_beam_outputs_are_identical_to_unsorted_decoding(copy_model):
    model, source = copy_model
    lengths = np.count_nonzero(source, axis=1)
    assert len(set(lengths)) >= 3  # rows of several lengths, so sorting reorders and trims
    rows = np.random.default_rng(0).permutation(len(source))
    source = source[rows]
    for decode in (
        cached_greedy_decoder(model, model.max_target_length),
        beam_search_decoder(model, model.max_target_length, width=3, alpha=0.6),
    ):
        before = decode_in_batches(decode, source)  # what the run did before: corpus order, 256 rows
        np.testing.assert_array_equal(decode_sorted(decode, source, batch_size=7), before)
        np.testing.assert_array_equal(decode_sorted(decode, source), before)


def test_batches_are_length_sorted_trimmed_and_the_order_restored():
    source = np.zeros((9, 8), np.int32)
    lengths = np.array([5, 1, 8, 3, 3, 7, 2, 6, 4])
    for row, length in enumerate(lengths):
        source[row, :length] = np.arange(1, length + 1)

    def report(ids: tf.Tensor) -> tf.Tensor:
        """Per row: its own length and the width of the batch it was decoded in."""
        width = tf.fill([tf.shape(ids)[0]], tf.shape(ids)[1])
        return tf.stack([tf.math.count_nonzero(ids, axis=1, dtype=tf.int32), width], axis=1)

    out = decode_sorted(report, source, batch_size=4)
    np.testing.assert_array_equal(out[:, 0], lengths)  # back in the original order
    # sorted lengths 1 2 3 3 | 4 5 6 7 | 8: each batch cut to its longest row
    expected_width = {1: 3, 2: 3, 3: 3, 4: 7, 5: 7, 6: 7, 7: 7, 8: 8}
    np.testing.assert_array_equal(out[:, 1], [expected_width[length] for length in lengths])
    with pytest.raises(ValueError, match="batch_size=0"):
        decode_sorted(report, source, batch_size=0)
