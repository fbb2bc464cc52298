"""Beam search on the cached decoder: keep the `width` best partial translations instead of one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from keras import ops

from tx_keras.decoding.cached_step import decode_step, start_buffer, start_caches
from tx_keras.decoding.compiled_decoder import compile_decoder
from tx_keras.layers.position_write import write_at
from tx_keras.special_tokens import EOS, PAD

if TYPE_CHECKING:
    from tx_keras.models import Transformer

# A score no real hypothesis reaches; finite so that sums and divisions never make NaN.
_IMPOSSIBLE = -1e9


def length_penalty(length, alpha: float):
    """GNMT's ((5 + length) / 6) ** alpha (Wu et al. 2016): dividing log-probabilities by it keeps long
    translations from losing just for having more words; alpha = 0 turns it off."""
    return ops.power((5.0 + ops.cast(length, "float32")) / 6.0, alpha)


def beam_search_decoder(
    model: Transformer,
    max_length: int,
    width: int = 4,
    alpha: float = 0.6,
    return_attention_scores: bool = False,
) -> Callable:
    """A compiled beam search: source ids (B, Ts) -> the best hypothesis' ids (B, max_length), 0 after EOS.

    Each sentence keeps `width` hypotheses (flattened into the batch, B * width rows, each with its own
    self-attention cache). A step extends every live hypothesis by every word, ranks the candidates by
    log-probability / length_penalty(length, alpha), keeps the best `width` and reorders the caches to
    follow them (the cross-attention caches are the same for a sentence's rows and stay). A finished
    hypothesis (it emitted EOS) stays in the beam with its score frozen, so it competes with the live ones
    until something better appears. Width 1 is greedy decoding. With `return_attention_scores` also the best
    hypothesis' cross-attention (B, layers, heads, max_length, Ts), 0 after its EOS.
    """
    if width < 1:
        raise ValueError(f"beam width={width} must be >= 1")
    if width > model.target_vocab_size:
        raise ValueError(f"beam width={width} exceeds the target vocabulary ({model.target_vocab_size})")
    vocab_size, layers, heads = model.target_vocab_size, model.num_decoder_layers, model.num_heads

    def decode(source_ids):
        batch, source_length = ops.shape(source_ids)[0], ops.shape(source_ids)[1]
        rows = batch * width
        memory = ops.repeat(model.encode(source_ids, training=False), width, axis=0)
        source_mask = ops.repeat(ops.not_equal(source_ids, 0), width, axis=0)
        # All hypotheses start identical; only the first may grow, or the beam would fill with copies.
        first = ops.where(ops.arange(width) == 0, 0.0, _IMPOSSIBLE)
        scores = ops.zeros((batch, width), "float32") + ops.cast(first, "float32")[None, :]
        attention = ops.zeros(
            (rows, layers, heads, max_length, source_length) if return_attention_scores else (0,), "float32"
        )
        only_padding = ops.cast(ops.where(ops.arange(vocab_size) == PAD, 0.0, _IMPOSSIBLE), "float32")
        # Each sentence's first row: a kept hypothesis' row in the flattened batch is its origin plus this.
        offsets = ops.arange(batch, dtype="int32")[:, None] * width

        def body(position, buffer, scores, lengths, finished, caches, attention):
            logits, (self_caches, cross_caches), weights = decode_step(
                model, buffer, position, caches, memory, source_mask
            )
            if return_attention_scores:
                # A hypothesis that had ended reads nothing: its rows stay 0, whatever its batch holds.
                weights = ops.where(ops.reshape(finished, (-1,))[:, None, None, None], 0.0, weights)
            log_probs = ops.reshape(ops.log_softmax(ops.cast(logits, "float32")), (batch, width, vocab_size))
            # A finished hypothesis can only be followed by padding, at no cost: its score stays.
            log_probs = ops.where(finished[:, :, None], only_padding, log_probs)
            candidates = scores[:, :, None] + log_probs
            new_lengths = ops.where(finished, lengths, position + 1)
            ranked = candidates / length_penalty(new_lengths, alpha)[:, :, None]
            _, best = ops.top_k(ops.reshape(ranked, (batch, width * vocab_size)), k=width)
            best = ops.cast(best, "int32")
            origin, word = best // vocab_size, best % vocab_size
            scores = ops.take_along_axis(ops.reshape(candidates, (batch, width * vocab_size)), best, axis=1)
            lengths = ops.take_along_axis(new_lengths, origin, axis=1)
            finished = ops.take_along_axis(finished, origin, axis=1) | ops.equal(word, EOS)
            rows_from = ops.reshape(origin + offsets, (-1,))
            self_caches = [ops.take(cache, rows_from, axis=1) for cache in self_caches]
            buffer = write_at(
                ops.take(buffer, rows_from, axis=0), position + 1, ops.reshape(word, (-1, 1)), axis=1
            )
            if return_attention_scores:
                attention = write_at(attention, position, weights[:, :, :, None], axis=3)
                attention = ops.take(attention, rows_from, axis=0)
            return position + 1, buffer, scores, lengths, finished, (self_caches, cross_caches), attention

        start = (
            ops.zeros((), "int32"),
            start_buffer(rows, max_length),
            scores,
            ops.zeros((batch, width), "int32"),
            ops.zeros((batch, width), "bool"),
            start_caches(model, memory, max_length),
            attention,
        )
        _, buffer, scores, lengths, _, _, attention = ops.while_loop(
            lambda position, *state: (position < max_length) & ~ops.all(state[3]), body, start
        )
        best = ops.cast(ops.argmax(scores / length_penalty(lengths, alpha), axis=1), "int32")
        chosen = best + offsets[:, 0]
        ids = ops.take(buffer[:, 1:], chosen, axis=0)
        return (ids, ops.take(attention, chosen, axis=0)) if return_attention_scores else ids

    return compile_decoder(decode, model)
