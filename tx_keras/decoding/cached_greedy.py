"""The fast greedy decoder: the reference's words, one new position computed per step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from keras import ops

from tx_keras.decoding.cached_step import decode_step, start_buffer, start_caches
from tx_keras.decoding.compiled_decoder import compile_decoder
from tx_keras.layers.position_write import write_at
from tx_keras.most_likely import most_likely
from tx_keras.special_tokens import EOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def cached_greedy_decoder(
    model: Transformer, max_length: int, return_attention_scores: bool = False
) -> Callable:
    """Same output as `greedy_decoder`, with key/value caches: the encoder output's cross-attention keys
    and values are projected once per sentence (the first step fills their caches) and every
    self-attention key/value once per word, so a step costs one position instead of re-running the
    decoder over all of them. Shapes are fixed (a (B, max_length) buffer), so the loop is traced once.
    Source ids (B, Ts) -> ids (B, max_length), 0 after EOS; with `return_attention_scores` also the
    cross-attention (B, layers, heads, max_length, Ts) of each output word, 0 after EOS.
    """
    heads, layers = model.num_heads, model.num_decoder_layers

    def decode(source_ids):
        batch, source_length = ops.shape(source_ids)[0], ops.shape(source_ids)[1]
        memory = model.encode(source_ids, training=False)
        source_mask = ops.not_equal(source_ids, 0)
        attention = ops.zeros(
            (batch, layers, heads, max_length, source_length) if return_attention_scores else (0,), "float32"
        )

        def body(position, buffer, finished, caches, attention):
            logits, caches, weights = decode_step(model, buffer, position, caches, memory, source_mask)
            word = ops.where(finished, 0, most_likely(logits))
            buffer = write_at(buffer, position + 1, word[:, None], axis=1)
            if return_attention_scores:
                # A sentence that had ended reads nothing: its rows stay 0, whatever else its batch holds
                # (the loop runs on while others do), so a sentence's attention is its own.
                weights = ops.where(finished[:, None, None, None], 0.0, weights)
                attention = write_at(attention, position, weights[:, :, :, None], axis=3)
            return position + 1, buffer, finished | ops.equal(word, EOS), caches, attention

        start = (
            ops.zeros((), "int32"),
            start_buffer(batch, max_length),
            ops.zeros((batch,), "bool"),
            start_caches(model, memory, max_length),
            attention,
        )
        _, buffer, _, _, attention = ops.while_loop(
            lambda position, buffer, finished, *_: (position < max_length) & ~ops.all(finished),
            body,
            start,
        )
        return (buffer[:, 1:], attention) if return_attention_scores else buffer[:, 1:]

    return compile_decoder(decode, model)
