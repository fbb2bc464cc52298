"""The decoder: causal self-attention, cross-attention to the encoder, FFN; each in Add + Norm."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.layers import AlignedAttention
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

    def call(
        self,
        inputs,
        memory,
        target_mask=None,
        source_mask=None,
        training=None,
        return_attention_scores=False,
        self_attention_cache=None,
        self_attention_cache_update_index=None,
        cross_attention_cache=None,
        cross_attention_cache_update_index=None,
    ):
        """Returns the block output, plus {"self_attention": (B,h,Tt,Tt), "cross_attention": (B,h,Tt,Ts)}
        with `return_attention_scores`, plus the updated (self_attention_cache, cross_attention_cache) when
        decoding with caches (KerasHub's TransformerDecoder arguments).

        Decoding: `inputs` are the new positions from `self_attention_cache_update_index` on, whose keys
        and values are written into `self_attention_cache` (2, B, h, T, d_k); `target_mask` (B, T) then
        hides the cache's padded slots. `cross_attention_cache` (2, B, h, Ts, d_k) is filled from `memory`
        with `cross_attention_cache_update_index=0` and read as it is when that is None.
        """
        position = 0 if self_attention_cache_update_index is None else self_attention_cache_update_index
        # Aligned cross-attention reads by position, which a filled cache does not tell it.
        aligned = {"query_start": position} if isinstance(self._cross_attention, AlignedAttention) else {}
        outputs, self_rest = self._sublayer(
            self._self_add_norm,
            inputs,
            lambda x: self._self_attention(
                x,
                key_mask=target_mask,
                use_causal_mask=True,
                return_attention_scores=return_attention_scores,
                training=training,
                cache=self_attention_cache,
                cache_update_index=self_attention_cache_update_index,
            ),
            training,
        )
        outputs, cross_rest = self._sublayer(
            self._cross_add_norm,
            outputs,
            lambda x: self._cross_attention(
                x,
                memory,
                key_mask=source_mask,
                return_attention_scores=return_attention_scores,
                training=training,
                cache=cross_attention_cache,
                cache_update_index=cross_attention_cache_update_index,
                **aligned,
            ),
            training,
        )
        outputs = self._feed_forward(outputs, training, target_mask)
        result = (outputs,)
        if return_attention_scores:
            result += ({"self_attention": self_rest[0], "cross_attention": cross_rest[0]},)
        if self_attention_cache is not None:
            result += (self_rest[-1], cross_rest[-1])
        return result if len(result) > 1 else outputs

    def fill_cross_attention_cache(self, memory, cache):
        """`cache` (2, B, h, Ts, d_k) holding the cross-attention keys and values of `memory` (B, Ts, d),
        written by the attention layer's own call (a user's class included); the one query it needs, the
        first memory row, is thrown away. Decoding does it once per sentence, before its loop."""
        return self._cross_attention(memory[:, :1], memory, cache=cache, cache_update_index=0)[-1]


@keras.saving.register_keras_serializable(package="tx_keras")
class Decoder(Stack):
    """Embedding + `num_layers` `DecoderBlock`s: target ids (B, Tt) and encoder output -> (B, Tt, d_model).

    With `return_attention_scores=True` also returns {"self_attention": per-layer causal weights
    (B, h, Tt, Tt), "cross_attention": per-layer (B, h, Tt, Ts), "outputs": per-layer block outputs}.
    """

    block_class = DecoderBlock

    def build(self, ids_shape, memory_shape):
        self._build_stack(ids_shape, memory_shape)

    def call(
        self,
        ids,
        memory,
        source_mask=None,
        training=None,
        return_attention_scores=False,
        target_mask=None,
        self_attention_caches=None,
        cross_attention_caches=None,
        cache_update_index=None,
        cross_attention_cache_update_index=None,
    ):
        """Decoder states (B, Tt, d_model) of target ids (B, Tt), with the trace if `return_attention_scores`.

        Decoding with caches (one (2, B, h, T, d_k) self- and cross-attention cache per block; see
        `DecoderBlock.call`): `ids` (B, Tq) are the new tokens at `cache_update_index`, `target_mask`
        (B, T) hides the cache's padded slots. Returns (states, self_attention_caches,
        cross_attention_caches, per-block cross-attention weights (B, h, Tq, Ts)): the numbers the
        uncached call gives at those positions, reading one new position instead of all of them.
        """
        hidden = self._embed(ids, training, 0 if cache_update_index is None else cache_update_index)
        target_mask = ops.not_equal(ids, 0) if target_mask is None else target_mask
        if self_attention_caches is None:
            return self._run_blocks(
                hidden,
                return_attention_scores,
                memory=memory,
                target_mask=target_mask,
                source_mask=source_mask,
                training=training,
            )
        self_caches, cross_caches, cross_weights = [], [], []
        for block, self_cache, cross_cache in zip(
            self._blocks, self_attention_caches, cross_attention_caches, strict=True
        ):
            hidden, weights, self_cache, cross_cache = block(
                hidden,
                memory,
                target_mask,
                source_mask,
                training=training,
                return_attention_scores=True,
                self_attention_cache=self_cache,
                self_attention_cache_update_index=cache_update_index,
                cross_attention_cache=cross_cache,
                cross_attention_cache_update_index=cross_attention_cache_update_index,
            )
            self_caches.append(self_cache)
            cross_caches.append(cross_cache)
            cross_weights.append(weights["cross_attention"])
        if self._final_norm is not None:
            hidden = self._final_norm(hidden)
        return hidden, self_caches, cross_caches, cross_weights

    def fill_cross_attention_caches(self, memory, caches: list) -> list:
        """Every block's cross-attention cache filled from `memory` (see DecoderBlock's method)."""
        pairs = zip(self._blocks, caches, strict=True)
        return [block.fill_cross_attention_cache(memory, cache) for block, cache in pairs]

    def compute_output_shape(self, ids_shape, memory_shape):
        return (*ids_shape, self.d_model)
