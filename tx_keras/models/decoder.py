"""The decoder: causal self-attention, cross-attention to the encoder, FFN; each in Add + Norm."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.models.encoder import EncoderBlock
from tx_keras.models.stack import Stack


@keras.saving.register_keras_serializable(package="tx_keras")
class DecoderBlock(EncoderBlock):
    """Causal self-attention (a word sees only earlier words), then cross-attention whose queries come
    from the decoder and keys/values from the encoder output (`memory`), then the FFN.

    Masking: `target_mask` (B, Tt) hides padded target keys; `source_mask` (B, Ts) hides padded source
    keys in cross-attention; the causal mask hides the future.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cross_attention = self._attention("cross_attention")
        self._cross_add_norm = self._add_norm("cross_attention")

    def build(self, inputs_shape, memory_shape):
        super().build(inputs_shape)
        self._cross_attention.build(inputs_shape, memory_shape)
        self._cross_add_norm.build(inputs_shape)

    def call(self, inputs, memory, target_mask=None, source_mask=None, training=None, return_attention=False):
        """Returns the block output, plus {"self_attention": (B,h,Tt,Tt), "cross_attention": (B,h,Tt,Ts)}."""
        outputs, self_weights = self._sublayer(
            self._self_add_norm,
            inputs,
            lambda x: self._self_attention(
                x,
                key_mask=target_mask,
                use_causal_mask=True,
                return_attention_scores=return_attention,
                training=training,
            ),
            return_attention,
            training,
        )
        outputs, cross_weights = self._sublayer(
            self._cross_add_norm,
            outputs,
            lambda x: self._cross_attention(
                x, memory, key_mask=source_mask, return_attention_scores=return_attention, training=training
            ),
            return_attention,
            training,
        )
        outputs = self._feed_forward(outputs, training)
        weights = {"self_attention": self_weights, "cross_attention": cross_weights}
        return (outputs, weights) if return_attention else outputs

    def step(self, inputs, position, cache, cross_key_values, target_mask, source_mask):
        """One decoding step for the single new position `position` (inference only).

        `inputs` (B, 1, d) is that position's input; `cache` = (keys, values) (B, h, max_length, d_k) of
        the self-attention, written at `position` and returned; `cross_key_values` are the encoder
        output's projections (see `Decoder.cross_key_values`); `target_mask` (B, max_length) hides
        future and padded positions. Returns (outputs (B, 1, d), cache, cross weights (B, h, 1, Ts)):
        the same numbers `call` gives at that position, without recomputing the earlier ones.
        """
        keys, values = cache
        queries = self._self_add_norm.sublayer_input(inputs)
        new_keys, new_values = self._self_attention.project_key_value(queries)
        slot = ops.reshape(ops.one_hot(position, ops.shape(keys)[2], dtype=keys.dtype), (1, 1, -1, 1))
        keys, values = keys + slot * new_keys, values + slot * new_values  # the slot was zero
        attended, _ = self._self_attention.attend(
            queries, keys, values, key_mask=target_mask, query_position=position
        )
        outputs = self._self_add_norm(inputs, attended, training=False)
        attended, cross_weights = self._cross_attention.attend(
            self._cross_add_norm.sublayer_input(outputs),
            *cross_key_values,
            key_mask=source_mask,
            query_position=position,
        )
        outputs = self._cross_add_norm(outputs, attended, training=False)
        return self._feed_forward(outputs, False), (keys, values), cross_weights


@keras.saving.register_keras_serializable(package="tx_keras")
class Decoder(Stack):
    """Embedding + `num_layers` `DecoderBlock`s: target ids (B, Tt) and encoder output -> (B, Tt, d_model).

    With `return_trace=True` also returns {"self_attention": per-layer causal weights (B, h, Tt, Tt),
    "cross_attention": per-layer (B, h, Tt, Ts), "outputs": per-layer block outputs}.
    """

    block_class = DecoderBlock

    def build(self, ids_shape, memory_shape):
        self._build_stack(ids_shape, memory_shape)

    def call(self, ids, memory, source_mask=None, training=None, return_trace=False):
        hidden = self._embed(ids, training)
        return self._run_blocks(
            hidden,
            return_trace,
            memory=memory,
            target_mask=keras.ops.not_equal(ids, 0),
            source_mask=source_mask,
            training=training,
        )

    def cross_key_values(self, memory) -> list:
        """Each block's cross-attention keys and values (B, h, Ts, d_k) of the encoder output: the
        source does not change while decoding, so they are projected once per sentence."""
        return [block._cross_attention.project_key_value(memory) for block in self._blocks]

    def empty_cache(self, batch_size, max_length: int) -> list:
        """Zeroed self-attention (keys, values) per block, (B, h, max_length, d_k), for `step`."""
        shape = (batch_size, self.num_heads, max_length, self.d_model // self.num_heads)
        return [
            (ops.zeros(shape, self.compute_dtype), ops.zeros(shape, self.compute_dtype)) for _ in self._blocks
        ]

    def step(self, ids, position, caches, cross_key_values, target_mask, source_mask):
        """Incremental decoding: `ids` (B, 1) at `position` -> (hidden (B, 1, d), caches, per-layer cross
        weights (B, h, 1, Ts)). The key/value cache makes a step cost one position, not all so far."""
        hidden = self._embedding(ids, start=position)
        new_caches, cross_weights = [], []
        for block, cache, key_values in zip(self._blocks, caches, cross_key_values, strict=True):
            hidden, cache, weights = block.step(hidden, position, cache, key_values, target_mask, source_mask)
            new_caches.append(cache)
            cross_weights.append(weights)
        if self._final_norm is not None:
            hidden = self._final_norm(hidden)
        return hidden, new_caches, cross_weights

    def compute_output_shape(self, ids_shape, memory_shape):
        return (*ids_shape, self.d_model)
