"""The reference greedy decoder: the TensorFlow tutorial's decoding, with no cache."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tensorflow as tf

from tx_keras.special_tokens import EOS, SOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def greedy_decoder(model: Transformer, max_length: int) -> Callable[[tf.Tensor], tf.Tensor]:
    """A compiled greedy decoder: source ids (B, Ts) -> generated ids (B, max_length), 0 after EOS.

    As the lecture describes it: step t runs the decoder's call (no cache) on the t words chosen so far
    (SOS first), takes the last position's most likely word and feeds it back; only that position is
    projected onto the vocabulary. The loop stops when every sentence has emitted EOS. The reference that
    the cached decoders must match word for word, and the uncached baseline of the decoding benchmark.
    """

    # autograph=False: the loop is an explicit tf.while_loop, so there is nothing to convert, and converting
    # the model's Python code each trace cost seconds (an export traces several; docs/performance.md).
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    def decode(source_ids: tf.Tensor) -> tf.Tensor:
        batch = tf.shape(source_ids)[0]
        memory = model.encode(source_ids, training=False)
        source_mask = tf.not_equal(source_ids, 0)

        def body(words, finished):
            hidden = model.decoder(words, memory, source_mask=source_mask, training=False)
            logits = model.logits(hidden[:, -1:, :])[:, 0, :]
            word = tf.where(finished, 0, tf.argmax(logits, axis=-1, output_type=tf.int32))
            return tf.concat([words, word[:, None]], axis=1), finished | tf.equal(word, EOS)

        words, _ = tf.while_loop(
            lambda words, finished: (tf.shape(words)[1] <= max_length) & ~tf.reduce_all(finished),
            body,
            (tf.fill([batch, 1], SOS), tf.zeros([batch], tf.bool)),
            shape_invariants=(tf.TensorShape([None, None]), tf.TensorShape([None])),
        )
        words = words[:, 1:]
        return tf.pad(words, [[0, 0], [0, max_length - tf.shape(words)[1]]])

    return decode
