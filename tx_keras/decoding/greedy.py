"""The reference greedy decoder: the TensorFlow tutorial's decoding, with no cache."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import keras
from keras import ops

from tx_keras.decoding.cached_step import at_position, start_buffer
from tx_keras.decoding.compiled_decoder import compile_decoder
from tx_keras.layers.position_write import write_at
from tx_keras.most_likely import most_likely
from tx_keras.special_tokens import EOS

if TYPE_CHECKING:
    from tx_keras.models import Transformer


def greedy_decoder(model: Transformer, max_length: int) -> Callable:
    """A compiled greedy decoder: source ids (B, Ts) -> generated ids (B, max_length), 0 after EOS.

    As the lecture describes it: step t runs the decoder's call (no cache) on the t + 1 words chosen so
    far (SOS first), takes the last one's most likely next word and feeds it back; only that position is
    projected onto the vocabulary. The words live in a fixed (B, max_length + 1) buffer, the shape a
    compiled loop carries on every backend. TensorFlow runs the decoder on the buffer's first t + 1
    columns, a shape that changes every step; JAX compiles fixed shapes only, so there it runs on the
    whole buffer, whose words not chosen yet are padding that the causal and padding masks hide from
    position t (about twice the work over a sentence). The loop stops when every sentence has emitted EOS.
    The reference that the cached decoders must match word for word, and the uncached baseline of the
    decoding benchmark (on TensorFlow).
    """
    prefix_only = keras.config.backend() == "tensorflow"

    def decode(source_ids):
        batch = ops.shape(source_ids)[0]
        memory = model.encode(source_ids, training=False)
        source_mask = ops.not_equal(source_ids, 0)

        def body(position, buffer, finished):
            words = buffer[:, : position + 1] if prefix_only else buffer[:, :-1]
            hidden = model.decoder(words, memory, source_mask=source_mask, training=False)
            logits = model.logits(at_position(hidden, position))[:, 0, :]
            word = ops.where(finished, 0, most_likely(logits))
            buffer = write_at(buffer, position + 1, word[:, None], axis=1)
            return position + 1, buffer, finished | ops.equal(word, EOS)

        _, buffer, _ = ops.while_loop(
            lambda position, buffer, finished: (position < max_length) & ~ops.all(finished),
            body,
            (ops.zeros((), "int32"), start_buffer(batch, max_length), ops.zeros((batch,), "bool")),
        )
        return buffer[:, 1:]

    return compile_decoder(decode, model)
