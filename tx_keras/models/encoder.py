"""The encoder: N blocks of multi-head self-attention + FFN, each sublayer wrapped in Add + Norm."""

from __future__ import annotations

import keras

from tx_keras.layers import ATTENTION_IMPLEMENTATIONS, ATTENTION_KINDS, AddNorm, AlignedAttention, FeedForward
from tx_keras.models.stack import Stack


@keras.saving.register_keras_serializable(package="tx_keras")
class EncoderBlock(keras.layers.Layer):
    """Self-attention then FFN, each inside an `AddNorm` (residual on/off, norm post/pre/none).

    With `ffn=False` the block is attention only: the lecture's "only linear weighting" ablation. With
    `attention="none"` every position reads only itself (`AlignedAttention`): no context, FFN kept.
    Masking: `padding_mask` (B, T), True for real tokens, hides padded keys from every query.
    `DecoderBlock` extends this class with causal masking and cross-attention.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dff: int,
        dropout: float = 0.0,
        residual: bool = True,
        norm: str = "post",
        ffn: bool = True,
        activation: str = "relu",
        attention_impl: str = "fused",
        fused_qkv: bool = False,
        attention: str = "full",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if attention not in ATTENTION_KINDS:
            raise ValueError(
                f"attention={attention!r} is unknown; choose one of: {', '.join(ATTENTION_KINDS)}"
            )
        if attention_impl not in ATTENTION_IMPLEMENTATIONS:
            raise ValueError(
                f"attention_impl={attention_impl!r} is unknown; "
                f"choose one of: {', '.join(ATTENTION_IMPLEMENTATIONS)}"
            )
        self.d_model, self.num_heads, self.dff, self.dropout = d_model, num_heads, dff, dropout
        self.residual, self.norm, self.ffn, self.activation = residual, norm, ffn, activation
        self.attention_impl, self.fused_qkv, self.attention = attention_impl, fused_qkv, attention
        self.supports_masking = True  # the output keeps the input's padding positions
        self._self_attention = self._attention("self_attention")
        self._self_add_norm = self._add_norm("self_attention")
        self._ffn = (
            FeedForward(d_model, dff, activation, dropout, name="ffn", dtype=self.dtype_policy)
            if ffn
            else None
        )
        self._ffn_add_norm = self._add_norm("ffn") if ffn else None

    def _attention(self, name: str) -> keras.layers.Layer:
        if self.attention == "none":
            return AlignedAttention(
                self.num_heads, self.d_model, dropout=self.dropout, name=name, dtype=self.dtype_policy
            )
        fused = {"fused_qkv": self.fused_qkv} if self.attention_impl == "fused" else {}
        return ATTENTION_IMPLEMENTATIONS[self.attention_impl](
            self.num_heads, self.d_model, dropout=self.dropout, name=name, dtype=self.dtype_policy, **fused
        )

    def _add_norm(self, name: str) -> AddNorm:
        return AddNorm(
            self.residual, self.norm, self.dropout, name=f"{name}_add_norm", dtype=self.dtype_policy
        )

    def build(self, inputs_shape):
        self._self_attention.build(inputs_shape, inputs_shape)
        self._self_add_norm.build(inputs_shape)
        if self._ffn is not None:
            self._ffn.build(inputs_shape)
            self._ffn_add_norm.build(inputs_shape)
        self.built = True

    @staticmethod
    def _sublayer(add_norm: AddNorm, inputs, sublayer, return_attention: bool, training):
        """Run one attention sublayer inside its Add + Norm; returns (outputs, weights or None)."""
        attended = sublayer(add_norm.sublayer_input(inputs))
        weights = None
        if return_attention:
            attended, weights = attended
        return add_norm(inputs, attended, training=training), weights

    def _feed_forward(self, inputs, training):
        if self._ffn is None:
            return inputs
        transformed = self._ffn(self._ffn_add_norm.sublayer_input(inputs), training=training)
        return self._ffn_add_norm(inputs, transformed, training=training)

    def call(self, inputs, padding_mask=None, training=None, return_attention=False):
        """Returns the block output, and {"self_attention": (B, h, T, T) weights} if `return_attention`."""
        outputs, weights = self._sublayer(
            self._self_add_norm,
            inputs,
            lambda x: self._self_attention(
                x, key_mask=padding_mask, return_attention_scores=return_attention, training=training
            ),
            return_attention,
            training,
        )
        outputs = self._feed_forward(outputs, training)
        return (outputs, {"self_attention": weights}) if return_attention else outputs

    def compute_output_shape(self, inputs_shape, *other_shapes):
        return inputs_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "dropout": self.dropout,
            "residual": self.residual,
            "norm": self.norm,
            "ffn": self.ffn,
            "activation": self.activation,
            "attention_impl": self.attention_impl,
            "fused_qkv": self.fused_qkv,
            "attention": self.attention,
        }


@keras.saving.register_keras_serializable(package="tx_keras")
class Encoder(Stack):
    """Embedding + `num_layers` `EncoderBlock`s: source ids (B, T), id 0 = padding -> (B, T, d_model).

    With `return_trace=True` also returns {"self_attention": per-layer (B, h, T, T) weights,
    "outputs": per-layer (B, T, d_model) block outputs}.
    """

    block_class = EncoderBlock

    def build(self, ids_shape):
        self._build_stack(ids_shape)

    def call(self, ids, training=None, return_trace=False):
        hidden = self._embed(ids, training)
        return self._run_blocks(
            hidden, return_trace, padding_mask=keras.ops.not_equal(ids, 0), training=training
        )

    def compute_output_shape(self, ids_shape):
        return (*ids_shape, self.d_model)
