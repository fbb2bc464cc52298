"""The decoder: causal self-attention, cross-attention to the encoder, FFN; each in Add + Norm."""

from __future__ import annotations

import keras

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

    def compute_output_shape(self, ids_shape, memory_shape):
        return (*ids_shape, self.d_model)
