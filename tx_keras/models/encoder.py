"""The encoder: N blocks of multi-head self-attention + FFN, each sublayer wrapped in Add + Norm."""

from __future__ import annotations

import dataclasses

import keras

from tx_keras.components import position_classes, resolve
from tx_keras.layers import AddNorm, AlignedAttention
from tx_keras.models.model_config import ATTENTION_KINDS, ModelConfig, split_model_config
from tx_keras.models.real_positions import gathering, on_real_rows
from tx_keras.models.stack import Stack


@keras.saving.register_keras_serializable(package="tx_keras")
class EncoderBlock(keras.layers.Layer):
    """Self-attention then FFN, each inside an `AddNorm` (residual on/off, norm post/pre/none).

    With `ffn=False` the block is attention only: the lecture's "only linear weighting" ablation. With
    `attention="none"` every position reads only itself (`AlignedAttention`): no context, FFN kept.
    Masking: `padding_mask` (B, T), True for real tokens, hides padded keys from every query.
    `DecoderBlock` extends this class with causal masking and cross-attention.
    """

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        if config.attention not in ATTENTION_KINDS:
            raise ValueError(
                f"attention={config.attention!r} is unknown; choose one of: {', '.join(ATTENTION_KINDS)}"
            )
        self.config = config
        self.supports_masking = True  # the output keeps the input's padding positions
        # Rotary positions act inside self-attention, on each head's queries and keys (never cross-attention).
        _, self._rotation_class = position_classes(config.positions)
        self._self_attention = self._attention("self_attention", rotate=True)
        self._self_add_norm = self._add_norm("self_attention")
        self._ffn = (
            resolve("ffn", config.ffn_impl)(
                config.d_model,
                config.dff,
                config.activation,
                config.dropout,
                name="ffn",
                dtype=self.dtype_policy,
            )
            if config.ffn
            else None
        )
        self._ffn_add_norm = self._add_norm("ffn") if config.ffn else None

    def _attention(self, name: str, rotate: bool = False) -> keras.layers.Layer:
        """The attention sublayer `config.attention` / `config.attention_impl` name; `rotate` gives it the
        rotary position layer when positions rotate queries and keys."""
        config, policy = self.config, self.dtype_policy
        if config.attention == "none":
            return AlignedAttention(
                config.num_heads, config.d_model, dropout=config.dropout, name=name, dtype=policy
            )
        extras = {"fused_qkv": config.fused_qkv} if config.attention_impl == "fused" else {}
        if rotate and self._rotation_class is not None:
            extras["position_rotation"] = self._rotation_class(
                config.key_dim, name=f"{name}_rotation", dtype=policy
            )
        return resolve("attention", config.attention_impl)(
            config.num_heads, config.d_model, dropout=config.dropout, name=name, dtype=policy, **extras
        )

    def _add_norm(self, name: str) -> AddNorm:
        config = self.config
        return AddNorm(
            config.residual,
            config.norm,
            config.dropout,
            norm_impl=config.norm_impl,
            name=f"{name}_add_norm",
            dtype=self.dtype_policy,
        )

    def build(self, inputs_shape):
        self._self_attention.build(inputs_shape, inputs_shape)
        self._self_add_norm.build(inputs_shape)
        if self._ffn is not None:
            self._ffn.build(inputs_shape)
            self._ffn_add_norm.build(inputs_shape)
        self.built = True

    @staticmethod
    def _sublayer(add_norm: AddNorm, inputs, sublayer, training) -> tuple:
        """Run one attention sublayer inside its Add + Norm; returns (outputs, what the attention returned
        after its outputs: [the weights if asked for, then the cache if given])."""
        attended = sublayer(add_norm.sublayer_input(inputs))
        attended, *rest = attended if isinstance(attended, tuple) else (attended,)
        return add_norm(inputs, attended, training=training), rest

    def _feed_forward(self, inputs, training, real=None):
        """The FFN inside its Add + Norm; in a training step that gathers (real_positions.py), computed on
        the positions `real` (B, T) marks only: every op of it works position by position."""
        if self._ffn is None:
            return inputs

        def sublayer(rows):
            transformed = self._ffn(self._ffn_add_norm.sublayer_input(rows), training=training)
            return self._ffn_add_norm(rows, transformed, training=training)

        return (
            on_real_rows(sublayer, inputs, real)
            if real is not None and gathering(training)
            else sublayer(inputs)
        )

    def call(self, inputs, padding_mask=None, training=None, return_attention_scores=False):
        """The block output, and {"self_attention": (B, h, T, T) weights} if `return_attention_scores`."""
        outputs, weights = self._sublayer(
            self._self_add_norm,
            inputs,
            lambda x: self._self_attention(
                x, key_mask=padding_mask, return_attention_scores=return_attention_scores, training=training
            ),
            training,
        )
        outputs = self._feed_forward(outputs, training, padding_mask)
        return (outputs, {"self_attention": weights[0]}) if return_attention_scores else outputs

    def compute_output_shape(self, inputs_shape, *other_shapes):
        return inputs_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "model_config": dataclasses.asdict(self.config)}

    @classmethod
    def from_config(cls, config: dict) -> EncoderBlock:
        model_config, rest = split_model_config(config)
        return super().from_config({**rest, "config": model_config})


@keras.saving.register_keras_serializable(package="tx_keras")
class Encoder(Stack):
    """Embedding + `num_layers` `EncoderBlock`s: source ids (B, T), id 0 = padding -> (B, T, d_model).

    With `return_attention_scores=True` also returns {"self_attention": per-layer (B, h, T, T) weights,
    "outputs": per-layer (B, T, d_model) block outputs}.
    """

    block_class = EncoderBlock

    def build(self, ids_shape):
        self._build_stack(ids_shape)

    def call(self, ids, training=None, return_attention_scores=False):
        hidden = self._embed(ids, training)
        return self._run_blocks(
            hidden, return_attention_scores, padding_mask=keras.ops.not_equal(ids, 0), training=training
        )

    def compute_output_shape(self, ids_shape):
        return (*ids_shape, self.d_model)
