"""Beam search on the cached decoder: keep the `width` best partial translations instead of one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tensorflow as tf

from tx_keras.decoding.cached_step import decode_step, start_buffer, start_caches
from tx_keras.layers.position_write import write_at
from tx_keras.special_tokens import EOS, PAD

if TYPE_CHECKING:
    from tx_keras.models import Transformer

# A score no real hypothesis reaches; finite so that sums and divisions never make NaN.
_IMPOSSIBLE = -1e9


def length_penalty(length: tf.Tensor, alpha: float) -> tf.Tensor:
    """GNMT's ((5 + length) / 6) ** alpha (Wu et al. 2016): dividing log-probabilities by it keeps long
    translations from losing just for having more words; alpha = 0 turns it off."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def beam_search_decoder(
    model: Transformer,
    max_length: int,
    width: int = 4,
    alpha: float = 0.6,
    return_attention_scores: bool = False,
) -> Callable[[tf.Tensor], tf.Tensor | tuple[tf.Tensor, tf.Tensor]]:
    """A compiled beam search: source ids (B, Ts) -> the best hypothesis' ids (B, max_length), 0 after EOS.

    Each sentence keeps `width` hypotheses (flattened into the batch, B * width rows, each with its own
    self-attention cache). A step extends every live hypothesis by every word, ranks the candidates by
    log-probability / length_penalty(length, alpha), keeps the best `width` and reorders the caches to
    follow them (the cross-attention caches are the same for a sentence's rows and stay). A finished
    hypothesis (it emitted EOS) stays in the beam with its score frozen, so it competes with the live ones
    until something better appears. Width 1 is greedy decoding. With `return_attention_scores` also the best
    hypothesis' cross-attention (B, layers, heads, max_length, Ts).
    """
    if width < 1:
        raise ValueError(f"beam width={width} must be >= 1")
    if width > model.target_vocab_size:
        raise ValueError(f"beam width={width} exceeds the target vocabulary ({model.target_vocab_size})")
    vocab_size, layers, heads = model.target_vocab_size, model.num_decoder_layers, model.num_heads

    # autograph=False: the loop is an explicit tf.while_loop, so there is nothing to convert, and converting
    # the model's Python code each trace cost seconds (an export traces several; docs/performance.md).
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    def decode(source_ids: tf.Tensor):
        batch, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
        rows = batch * width
        memory = tf.repeat(model.encode(source_ids, training=False), width, axis=0)
        source_mask = tf.repeat(tf.not_equal(source_ids, 0), width, axis=0)
        # All hypotheses start identical; only the first may grow, or the beam would fill with copies.
        scores = tf.tile(tf.concat([[0.0], tf.fill([width - 1], _IMPOSSIBLE)], 0)[None], [batch, 1])
        attention = tf.zeros(
            [rows, layers, heads, max_length, source_length] if return_attention_scores else [0]
        )
        only_padding = tf.where(tf.range(vocab_size) == PAD, 0.0, _IMPOSSIBLE)

        def body(position, buffer, scores, lengths, finished, caches, attention):
            logits, (self_caches, cross_caches), weights = decode_step(
                model, buffer, position, caches, memory, source_mask
            )
            log_probs = tf.reshape(tf.nn.log_softmax(tf.cast(logits, tf.float32)), [batch, width, vocab_size])
            # A finished hypothesis can only be followed by padding, at no cost: its score stays.
            log_probs = tf.where(finished[:, :, None], only_padding, log_probs)
            candidates = scores[:, :, None] + log_probs
            new_lengths = tf.where(finished, lengths, position + 1)
            ranked = candidates / length_penalty(new_lengths, alpha)[:, :, None]
            _, best = tf.math.top_k(tf.reshape(ranked, [batch, width * vocab_size]), k=width)
            origin, word = best // vocab_size, best % vocab_size
            scores = tf.gather(tf.reshape(candidates, [batch, -1]), best, batch_dims=1)
            lengths = tf.gather(new_lengths, origin, batch_dims=1)
            finished = tf.gather(finished, origin, batch_dims=1) | tf.equal(word, EOS)
            rows_from = tf.reshape(origin + width * tf.range(batch)[:, None], [-1])
            self_caches = [tf.gather(cache, rows_from, axis=1) for cache in self_caches]
            buffer = write_at(tf.gather(buffer, rows_from), position + 1, tf.reshape(word, [-1, 1]), axis=1)
            if return_attention_scores:
                attention = tf.gather(
                    write_at(attention, position, weights[:, :, :, None], axis=3), rows_from
                )
            return position + 1, buffer, scores, lengths, finished, (self_caches, cross_caches), attention

        start = (
            tf.constant(0),
            start_buffer(rows, max_length),
            scores,
            tf.zeros([batch, width], tf.int32),
            tf.zeros([batch, width], tf.bool),
            start_caches(model, memory, max_length),
            attention,
        )
        _, buffer, scores, lengths, _, _, attention = tf.while_loop(
            lambda position, *state: (position < max_length) & ~tf.reduce_all(state[3]), body, start
        )
        best = tf.argmax(scores / length_penalty(lengths, alpha), axis=1, output_type=tf.int32)
        chosen = best + width * tf.range(batch)
        ids = tf.gather(buffer[:, 1:], chosen)
        return (ids, tf.gather(attention, chosen)) if return_attention_scores else ids

    return decode
