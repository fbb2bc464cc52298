"""The uncached baseline that cached decoding is measured against: the TensorFlow tutorial's decoding."""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from tx_keras.data import Vocabulary
from tx_keras.models import Transformer


def prefix_greedy_decoder(model: Transformer, max_length: int) -> Callable[[tf.Tensor], tf.Tensor]:
    """Greedy decoding without a cache, done with no more work than it needs: step t runs the decoder on
    the t tokens chosen so far (SOS first) and projects only the last position onto the vocabulary, as
    the TensorFlow Transformer tutorial does. Source ids (B, Ts) -> ids (B, max_length), 0 after EOS;
    the same tokens as `cached_greedy_decoder` (tests/test_bench.py), which reads one position a step.
    """

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def decode(source_ids: tf.Tensor) -> tf.Tensor:
        batch = tf.shape(source_ids)[0]
        memory = model.encode(source_ids, training=False)
        source_mask = tf.not_equal(source_ids, 0)

        def body(words, finished):
            hidden = model.decoder(words, memory, source_mask=source_mask, training=False)
            logits = model.logits(hidden[:, -1:, :])[:, 0, :]
            word = tf.where(finished, 0, tf.argmax(logits, axis=-1, output_type=tf.int32))
            return tf.concat([words, word[:, None]], axis=1), finished | tf.equal(word, Vocabulary.EOS)

        words, _ = tf.while_loop(
            lambda words, finished: (tf.shape(words)[1] <= max_length) & ~tf.reduce_all(finished),
            body,
            (tf.fill([batch, 1], Vocabulary.SOS), tf.zeros([batch], tf.bool)),
            shape_invariants=(tf.TensorShape([None, None]), tf.TensorShape([None])),
        )
        words = words[:, 1:]
        return tf.pad(words, [[0, 0], [0, max_length - tf.shape(words)[1]]])

    return decode
