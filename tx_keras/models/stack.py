"""What the encoder and decoder stacks share: embedding, N identical blocks, a final norm in pre-LN."""

from __future__ import annotations

import keras

from tx_keras.layers import TokenAndPositionEmbedding


class Stack(keras.layers.Layer):
    """Token + position embedding, `num_layers` blocks of `block_class`, final LayerNorm when norm="pre".

    Pre-LN leaves the residual stream un-normalised, so one last norm is needed; post-LN already ends
    on a norm. Subclasses set `block_class` and write `call`.
    """

    block_class: type[keras.layers.Layer]

    def __init__(
        self,
        vocab_size: int,
        max_length: int,
        num_layers: int,
        d_model: int,
        num_heads: int,
        dff: int,
        dropout: float = 0.0,
        residual: bool = True,
        norm: str = "post",
        ffn: bool = True,
        activation: str = "relu",
        attention_impl: str = "fused",
        positions: str = "sinusoidal",
        fused_qkv: bool = False,
        attention: str = "full",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if num_layers < 1:
            raise ValueError(f"num_layers={num_layers} must be >= 1")
        self.vocab_size, self.max_length, self.num_layers = vocab_size, max_length, num_layers
        self.d_model, self.num_heads, self.dff, self.dropout = d_model, num_heads, dff, dropout
        self.residual, self.norm, self.ffn, self.activation = residual, norm, ffn, activation
        self.attention_impl, self.positions, self.fused_qkv = attention_impl, positions, fused_qkv
        self.attention = attention
        policy = self.dtype_policy
        self._embedding = TokenAndPositionEmbedding(
            vocab_size, d_model, max_length, positions, name="embedding", dtype=policy
        )
        self._embedding_dropout = keras.layers.Dropout(dropout, dtype=policy)
        self._blocks = [
            self.block_class(
                d_model,
                num_heads,
                dff,
                dropout,
                residual,
                norm,
                ffn,
                activation,
                attention_impl,
                fused_qkv=fused_qkv,
                attention=attention,
                name=f"block_{i + 1}",
                dtype=policy,
            )
            for i in range(num_layers)
        ]
        self._final_norm = (
            keras.layers.LayerNormalization(epsilon=1e-6, name="final_norm", dtype=policy)
            if norm == "pre"
            else None
        )

    @property
    def token_table(self):
        """The stack's (vocab_size, d_model) token embeddings (see Transformer's tie_embeddings)."""
        return self._embedding.token_table

    def _build_stack(self, ids_shape, *block_shapes) -> None:
        self._embedding.build(ids_shape)
        hidden_shape = (*ids_shape, self.d_model)
        for block in self._blocks:
            block.build(hidden_shape, *block_shapes)
        if self._final_norm is not None:
            self._final_norm.build(hidden_shape)
        self.built = True

    def _embed(self, ids, training):
        return self._embedding_dropout(self._embedding(ids), training=training)

    def _run_blocks(self, hidden, return_trace: bool, **block_kwargs):
        """Every block in turn, collecting each block's attention weights and output when asked to."""
        trace: dict[str, list] = {"outputs": []}
        for block in self._blocks:
            hidden = block(hidden, return_attention=return_trace, **block_kwargs)
            if return_trace:
                hidden, weights = hidden
                for name, value in weights.items():
                    trace.setdefault(name, []).append(value)
                trace["outputs"].append(hidden)
        if self._final_norm is not None:
            hidden = self._final_norm(hidden)
        return (hidden, trace) if return_trace else hidden

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "max_length": self.max_length,
            "num_layers": self.num_layers,
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
        }
