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


def decode_step(model: Transformer, buffer, position, caches, cross_key_values, source_mask):
    """Logits (B, V) for the word after `position`, reading only the new position thanks to the cache.

    `buffer` (B, max_length + 1) holds SOS then the words chosen so far (0 after EOS); the target mask
    shows the decoder the positions <= `position` that hold a word, exactly what the uncached
    decoder's causal and padding masks show it. Returns (logits, caches, cross weights (B, layers, h, Ts)).
    """
    max_length = buffer.shape[1] - 1
    inputs = buffer[:, :max_length]
    visible = tf.logical_and(tf.not_equal(inputs, 0), tf.range(max_length)[None, :] <= position)
    ids = tf.gather(inputs, position[None], axis=1)
    hidden, caches, cross_weights = model.decoder.step(
        ids, position, caches, cross_key_values, visible, source_mask
    )
    logits = model.logits(hidden)[:, 0, :]
    return logits, caches, tf.cast(tf.stack(cross_weights, axis=1)[:, :, :, 0, :], tf.float32)


def _write(buffer, position, values):
    """buffer[:, position] = values, for a (B, L) buffer whose slot `position` is still 0 (a graph-friendly
    in-place write: no per-step shapes, so the loop is traced once)."""
    return buffer + tf.one_hot(position, tf.shape(buffer)[1], dtype=buffer.dtype)[None, :] * values[:, None]


def cached_greedy_decoder(
    model: Transformer, max_length: int, return_attention: bool = False
) -> Callable[[tf.Tensor], tf.Tensor | tuple[tf.Tensor, tf.Tensor]]:
    """The fast greedy decoder: same output as `greedy_decoder`, with a key/value cache.

    The encoder output's cross-attention keys/values are projected once per sentence and every
    self-attention key/value once per word (`Decoder.step`), so a step costs one position instead of
    re-running the decoder over all of them. Source ids (B, Ts) -> ids (B, max_length), 0 after EOS;
    with `return_attention` also the cross-attention (B, layers, heads, max_length, Ts) of each output word.
    """
    heads = model.num_heads

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def decode(source_ids: tf.Tensor):
        batch, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
        memory = model.encode(source_ids, training=False)
        source_mask = tf.not_equal(source_ids, 0)
        cross = model.decoder.cross_key_values(memory)
        buffer = tf.concat(
            [tf.fill([batch, 1], Vocabulary.SOS), tf.zeros([batch, max_length], tf.int32)], axis=1
        )
        layers = model.num_decoder_layers
        attention = tf.zeros([batch, layers, heads, max_length, source_length] if return_attention else [0])

        def body(position, buffer, finished, caches, attention):
            logits, caches, weights = decode_step(model, buffer, position, caches, cross, source_mask)
            word = tf.argmax(logits, axis=-1, output_type=tf.int32)
            word = tf.where(finished, 0, word)
            buffer = _write(buffer, position + 1, word)
            if return_attention:
                slot = tf.one_hot(position, max_length)[None, None, None, :, None]
                attention += slot * weights[:, :, :, None, :]
            return position + 1, buffer, finished | tf.equal(word, Vocabulary.EOS), caches, attention

        _, buffer, _, _, attention = tf.while_loop(
            lambda position, buffer, finished, *_: (position < max_length) & ~tf.reduce_all(finished),
            body,
            (0, buffer, tf.zeros([batch], tf.bool), model.decoder.empty_cache(batch, max_length), attention),
        )
        return (buffer[:, 1:], attention) if return_attention else buffer[:, 1:]

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
