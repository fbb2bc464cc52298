"""The full sequence-to-sequence Transformer: encoder, decoder and the projection to target-word logits."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.models.decoder import Decoder
from tx_keras.models.encoder import Encoder


@keras.saving.register_keras_serializable(package="tx_keras")
class Transformer(keras.Model):
    """Encoder + decoder + Dense to the target vocabulary; every knob is a constructor argument.

    Call with `(source_ids, decoder_input_ids)` (both int, id 0 = padding) -> logits (B, Tt, V_target).
    With `return_attention=True` also returns a dict of every attention map (see `trace`), keyed
    `encoder_self/layer_i` (B, h, Ts, Ts), `decoder_self/layer_i` (B, h, Tt, Tt),
    `cross/layer_i` (B, h, Tt, Ts).

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes (id 0 = padding).
        max_source_length, max_target_length: longest sequences (position tables).
        num_encoder_layers, num_decoder_layers: depths, set separately.
        d_model, num_heads, dff, dropout: widths, head count, FFN hidden width, dropout rate.
        residual: the Add of Add + Norm on/off. norm: "post", "pre" or "none". ffn: FFN sublayers on/off.
        activation: FFN activation. attention_impl: "fused" (default) or "looped" (one head at a time).
        positions: "sinusoidal", "learned" or "none".
        fused_qkv: one matmul for the q/k/v projections of self-attention (k/v of cross-attention); same
            weights and outputs as separate ones, faster (fused attention only).
        attention: "full" (attention by content) or "none" (each position reads only its aligned position,
            `AlignedAttention`: the "attention gives context" control).
        tie_embeddings: the logits are the decoder states times the decoder's own token embeddings (plus a
            bias) instead of a separate Dense: one matrix for a word in and out (Press & Wolf 2017), so a
            rare word's output row learns from its input uses too; V x d_model fewer weights.
    """

    def __init__(
        self,
        source_vocab_size: int,
        target_vocab_size: int,
        max_source_length: int,
        max_target_length: int,
        num_encoder_layers: int = 2,
        num_decoder_layers: int = 2,
        d_model: int = 64,
        num_heads: int = 4,
        dff: int = 256,
        dropout: float = 0.0,
        residual: bool = True,
        norm: str = "post",
        ffn: bool = True,
        activation: str = "relu",
        attention_impl: str = "fused",
        positions: str = "sinusoidal",
        fused_qkv: bool = False,
        attention: str = "full",
        tie_embeddings: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.source_vocab_size, self.target_vocab_size = source_vocab_size, target_vocab_size
        self.max_source_length, self.max_target_length = max_source_length, max_target_length
        self.num_encoder_layers, self.num_decoder_layers = num_encoder_layers, num_decoder_layers
        self.d_model, self.num_heads, self.dff, self.dropout = d_model, num_heads, dff, dropout
        self.residual, self.norm, self.ffn, self.activation = residual, norm, ffn, activation
        self.attention_impl, self.positions, self.fused_qkv = attention_impl, positions, fused_qkv
        self.attention, self.tie_embeddings = attention, tie_embeddings
        shared = dict(
            d_model=d_model,
            num_heads=num_heads,
            dff=dff,
            dropout=dropout,
            residual=residual,
            norm=norm,
            ffn=ffn,
            activation=activation,
            attention_impl=attention_impl,
            positions=positions,
            fused_qkv=fused_qkv,
            attention=attention,
            dtype=self.dtype_policy,
        )
        self.encoder = Encoder(
            source_vocab_size, max_source_length, num_encoder_layers, name="encoder", **shared
        )
        self.decoder = Decoder(
            target_vocab_size, max_target_length, num_decoder_layers, name="decoder", **shared
        )
        # The projection is a third of a step's FLOPs at an 8k vocabulary: it runs in the compute dtype
        # (bfloat16 under mixed precision), and `logits` casts its output to float32 for the softmax and
        # loss, as Keras' mixed-precision guide places the float32 boundary at the softmax.
        self.projection = (
            None
            if tie_embeddings
            else keras.layers.Dense(target_vocab_size, name="logits", dtype=self.dtype_policy)
        )

    def build(self, input_shape):
        source_shape, target_shape = (tuple(shape) for shape in input_shape)
        self.encoder.build(source_shape)
        self.decoder.build(target_shape, (*source_shape, self.d_model))
        if self.projection is None:
            self.logits_bias = self.add_weight(
                shape=(self.target_vocab_size,), initializer="zeros", name="logits_bias"
            )
        else:
            self.projection.build((*target_shape, self.d_model))
        self.built = True

    def logits(self, hidden):
        """Target-vocabulary logits (float32) from decoder states (B, T, d_model)."""
        if self.projection is None:
            table = ops.cast(self.decoder.token_table, hidden.dtype)
            logits = ops.matmul(hidden, ops.transpose(table)) + ops.cast(self.logits_bias, hidden.dtype)
            return ops.cast(logits, "float32")
        return ops.cast(self.projection(hidden), "float32")

    def encode(self, source_ids, training=None):
        """Encoder output (B, Ts, d_model): computed once per sentence, reused at every decoding step."""
        return self.encoder(source_ids, training=training)

    def decode(self, target_ids, memory, source_ids, training=None):
        """Next-word logits (B, Tt, V) for every target position, given the encoder output."""
        hidden = self.decoder(target_ids, memory, source_mask=ops.not_equal(source_ids, 0), training=training)
        return self.logits(hidden)

    def trace(self, inputs, training=False):
        """Logits plus what the dashboard looks at: every attention map and every block's output.

        Returns (logits, attention, outputs): attention keyed `encoder_self/layer_i`, `decoder_self/layer_i`,
        `cross/layer_i`; outputs keyed `encoder/layer_i`, `decoder/layer_i` (B, T, d_model).
        """
        source_ids, target_ids = inputs
        memory, encoder = self.encoder(source_ids, training=training, return_trace=True)
        hidden, decoder = self.decoder(
            target_ids, memory, source_mask=ops.not_equal(source_ids, 0), training=training, return_trace=True
        )
        attention, outputs = {}, {}
        for name, values in (
            ("encoder_self", encoder["self_attention"]),
            ("decoder_self", decoder["self_attention"]),
            ("cross", decoder["cross_attention"]),
        ):
            attention.update({f"{name}/layer_{i + 1}": value for i, value in enumerate(values)})
        for name, values in (("encoder", encoder["outputs"]), ("decoder", decoder["outputs"])):
            outputs.update({f"{name}/layer_{i + 1}": value for i, value in enumerate(values)})
        return self.logits(hidden), attention, outputs

    def call(self, inputs, training=None, return_attention=False):
        if return_attention:
            logits, attention, _ = self.trace(inputs, training)
            return logits, attention
        source_ids, target_ids = inputs
        return self.decode(target_ids, self.encode(source_ids, training), source_ids, training)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "source_vocab_size": self.source_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length,
            "num_encoder_layers": self.num_encoder_layers,
            "num_decoder_layers": self.num_decoder_layers,
            "d_model": self.d_model,
            "num_heads": self.num_heads,
            "dff": self.dff,
            "dropout": self.dropout,
            "residual": self.residual,
            "norm": self.norm,
            "ffn": self.ffn,
            "activation": self.activation,
            "attention_impl": self.attention_impl,
            "positions": self.positions,
            "fused_qkv": self.fused_qkv,
            "attention": self.attention,
            "tie_embeddings": self.tie_embeddings,
        }
