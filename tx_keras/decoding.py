"""Decoding one word at a time until EOS, as the lecture describes: feed back each predicted word."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import tensorflow as tf

from tx_keras.data import Vocabulary
from tx_keras.models import Transformer


def greedy_decoder(model: Transformer, max_length: int) -> Callable[[tf.Tensor], tf.Tensor]:
    """A compiled greedy decoder: source ids (B, Ts) -> generated ids (B, max_length), 0 after EOS.

    The reference path: at step t the whole decoder re-reads the t words produced so far (no cache),
    exactly as the TensorFlow tutorial does. Shapes are fixed (a (B, max_length) buffer of which only
    the first t positions are filled; the causal and padding masks hide the rest), so the graph is
    traced once per batch shape, not once per step. The loop stops when every sentence has emitted EOS.
    """

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def decode(source_ids: tf.Tensor) -> tf.Tensor:
        batch = tf.shape(source_ids)[0]
        memory = model.encode(source_ids, training=False)
        buffer = tf.concat(
            [tf.fill([batch, 1], Vocabulary.SOS), tf.zeros([batch, max_length], tf.int32)], axis=1
        )
        finished = tf.zeros([batch], tf.bool)
        for step in tf.range(max_length):
            logits = model.decode(buffer[:, :max_length], memory, source_ids, training=False)
            word = tf.argmax(logits[:, step, :], axis=-1, output_type=tf.int32)
            word = tf.where(finished, 0, word)
            buffer += tf.one_hot(step + 1, max_length + 1, dtype=tf.int32)[None, :] * word[:, None]
            finished = tf.logical_or(finished, tf.equal(word, Vocabulary.EOS))
            if tf.reduce_all(finished):
                break
        return buffer[:, 1:]

    return decode


def decode_in_batches(
    decode: Callable[[tf.Tensor], tf.Tensor], source_ids: np.ndarray, batch_size: int = 256
) -> np.ndarray:
    """Run a decoder over a whole split without holding every sentence in one batch."""
    parts = [
        decode(tf.constant(source_ids[i : i + batch_size], tf.int32)).numpy()
        for i in range(0, len(source_ids), batch_size)
    ]
    return np.concatenate(parts, axis=0)


def exact_match(predicted: np.ndarray, target_ids: np.ndarray, vocab: Vocabulary) -> float:
    """Share of sentences whose decoded words, up to EOS, equal the reference's exactly."""
    references = [vocab.decode(row) for row in target_ids]
    hits = sum(vocab.decode(row) == reference for row, reference in zip(predicted, references, strict=True))
    return hits / max(len(references), 1)
