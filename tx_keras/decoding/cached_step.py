"""One cached decoding step, shared by the cached greedy decoder and beam search."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keras import ops

from tx_keras.special_tokens import SOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def start_buffer(rows, max_length: int):
    """(rows, max_length + 1) int32: SOS, then zeros where the chosen words will be written."""
    return ops.concatenate(
        [ops.full((rows, 1), SOS, "int32"), ops.zeros((rows, max_length), "int32")], axis=1
    )


def start_caches(model: Transformer, memory, target_length: int) -> tuple[list, list]:
    """The (self-attention, cross-attention) caches decoding starts from, one (2, rows, h, T, d_k) tensor
    per decoder block in the decoder's compute dtype: zeroed self-attention ones (T = target_length), and
    cross-attention ones (T = Ts) filled from the encoder output `memory` (rows, Ts, d) through each
    layer's own call. Filled here, before the loop, so the loop's step is traced once; filling them in a
    first step peeled off the loop traced the whole decoder twice (3,075 graph ops against 1,997 for a
    2-layer greedy decoder, and as much more tracing time in every run and export)."""
    heads, dtype = model.num_heads, model.decoder.compute_dtype
    depth, layers = model.config.key_dim, model.num_decoder_layers
    rows, source_length = ops.shape(memory)[0], ops.shape(memory)[1]

    def zeros(length):
        return [ops.zeros((2, rows, heads, length, depth), dtype) for _ in range(layers)]

    return zeros(target_length), model.decoder.fill_cross_attention_caches(memory, zeros(source_length))


def at_position(tensor, position):
    """`tensor` (B, T, ...) at `position` (a tensor) of axis 1, kept as (B, 1, ...): a slice, with none of
    `ops.take`'s index fixing."""
    shape = ops.shape(tensor)
    return ops.slice(tensor, (0, position) + (0,) * (len(shape) - 2), (shape[0], 1, *shape[2:]))


def decode_step(model: Transformer, buffer, position, caches, memory, source_mask):
    """Logits (B, V) for the word after `position`, through the decoder's own call with caches: only the
    new position is computed, the earlier ones' keys and values are read from the self-attention caches.

    `buffer` (B, max_length + 1) holds SOS then the words chosen so far (0 after EOS): the target mask hides
    its padding as the uncached decoder's padding mask does, the causal mask the positions after
    `position`. `caches` = (self-attention caches, cross-attention caches filled by `start_caches`) per
    block. Returns (logits, caches, cross-attention weights (B, layers, h, Ts) in float32).
    """
    target = buffer[:, :-1]
    hidden, self_caches, cross_caches, weights = model.decoder(
        at_position(target, position),
        memory,
        source_mask=source_mask,
        training=False,
        target_mask=ops.not_equal(target, 0),
        self_attention_caches=caches[0],
        cross_attention_caches=caches[1],
        cache_update_index=position,
    )
    logits = model.logits(hidden)[:, 0, :]
    return logits, (self_caches, cross_caches), ops.cast(ops.stack(weights, axis=1)[:, :, :, 0, :], "float32")
