"""One cached decoding step, shared by the cached greedy decoder and beam search."""

from __future__ import annotations

from typing import TYPE_CHECKING

import tensorflow as tf

from tx_keras.special_tokens import SOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def start_buffer(rows, max_length: int) -> tf.Tensor:
    """(rows, max_length + 1) int32: SOS, then zeros where the chosen words will be written."""
    return tf.concat([tf.fill([rows, 1], SOS), tf.zeros([rows, max_length], tf.int32)], axis=1)


def empty_caches(model: Transformer, rows, target_length: int, source_length) -> tuple[list, list]:
    """Zeroed (self-attention, cross-attention) caches, one (2, rows, h, T, d_k) tensor per decoder block
    (T = target_length, source_length), in the decoder's compute dtype. The first step fills the
    cross-attention ones from the encoder output (`decode_step(..., fill_cross=True)`)."""
    heads, dtype = model.num_heads, model.decoder.compute_dtype
    depth, layers = model.d_model // heads, model.num_decoder_layers
    return tuple(
        [tf.zeros([2, rows, heads, length, depth], dtype) for _ in range(layers)]
        for length in (target_length, source_length)
    )


def decode_step(model: Transformer, buffer, position, caches, memory, source_mask, fill_cross: bool):
    """Logits (B, V) for the word after `position`, through the decoder's own call with caches: only the
    new position is computed, the earlier ones' keys and values are read from the self-attention caches.

    `buffer` (B, max_length + 1) holds SOS then the words chosen so far (0 after EOS): the target mask hides
    its padding as the uncached decoder's padding mask does, the causal mask the positions after
    `position`. `caches` = (self-attention caches, cross-attention caches) per block; `fill_cross` (the
    first step) fills the cross-attention caches from `memory` (B, Ts, d), which later steps read as they
    are. Returns (logits, caches, cross-attention weights (B, layers, h, Ts) in float32).
    """
    target = buffer[:, :-1]
    hidden, self_caches, cross_caches, weights = model.decoder(
        tf.gather(target, [position], axis=1),
        memory,
        source_mask=source_mask,
        training=False,
        target_mask=tf.not_equal(target, 0),
        self_attention_caches=caches[0],
        cross_attention_caches=caches[1],
        cache_update_index=position,
        cross_attention_cache_update_index=0 if fill_cross else None,
    )
    logits = model.logits(hidden)[:, 0, :]
    return logits, (self_caches, cross_caches), tf.cast(tf.stack(weights, axis=1)[:, :, :, 0, :], tf.float32)
