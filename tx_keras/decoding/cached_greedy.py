"""The fast greedy decoder: the reference's words, one new position computed per step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tensorflow as tf

from tx_keras.decoding.cached_step import decode_step, start_buffer, start_caches
from tx_keras.layers.position_write import write_at
from tx_keras.special_tokens import EOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def cached_greedy_decoder(
    model: Transformer, max_length: int, return_attention_scores: bool = False
) -> Callable[[tf.Tensor], tf.Tensor | tuple[tf.Tensor, tf.Tensor]]:
    """Same output as `greedy_decoder`, with key/value caches: the encoder output's cross-attention keys
    and values are projected once per sentence (the first step fills their caches) and every
    self-attention key/value once per word, so a step costs one position instead of re-running the
    decoder over all of them. Shapes are fixed (a (B, max_length) buffer), so the loop is traced once.
    Source ids (B, Ts) -> ids (B, max_length), 0 after EOS; with `return_attention_scores` also the
    cross-attention (B, layers, heads, max_length, Ts) of each output word.
    """
    heads, layers = model.num_heads, model.num_decoder_layers

    # autograph=False: the loop is an explicit tf.while_loop, so there is nothing to convert, and converting
    # the model's Python code each trace cost seconds (an export traces several; docs/performance.md).
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    def decode(source_ids: tf.Tensor):
        batch, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
        memory = model.encode(source_ids, training=False)
        source_mask = tf.not_equal(source_ids, 0)
        attention = tf.zeros(
            [batch, layers, heads, max_length, source_length] if return_attention_scores else [0]
        )

        def body(position, buffer, finished, caches, attention):
            logits, caches, weights = decode_step(model, buffer, position, caches, memory, source_mask)
            word = tf.where(finished, 0, tf.argmax(logits, axis=-1, output_type=tf.int32))
            buffer = write_at(buffer, position + 1, word[:, None], axis=1)
            if return_attention_scores:
                attention = write_at(attention, position, weights[:, :, :, None], axis=3)
            return position + 1, buffer, finished | tf.equal(word, EOS), caches, attention

        start = (
            tf.constant(0),
            start_buffer(batch, max_length),
            tf.zeros([batch], tf.bool),
            start_caches(model, memory, max_length),
            attention,
        )
        _, buffer, _, _, attention = tf.while_loop(
            lambda position, buffer, finished, *_: (position < max_length) & ~tf.reduce_all(finished),
            body,
            start,
        )
        return (buffer[:, 1:], attention) if return_attention_scores else buffer[:, 1:]

    return decode
