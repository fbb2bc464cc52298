"""What both forms of multi-head attention share: their arguments, their output shapes, their config."""

from __future__ import annotations

import keras


def check_heads(d_model: int, num_heads: int) -> int:
    """Per-head size d_k = d_model / h; the heads must split d_model exactly so concat gives d_model back."""
    if num_heads < 1 or d_model < 1 or d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} must be a positive multiple of num_heads={num_heads} "
            f"(each head gets d_model/num_heads features)"
        )
    return d_model // num_heads


class MultiHeadBase(keras.layers.Layer):
    """The common ground of `MultiHeadAttention` (fused) and `LoopedMultiHeadAttention` (one head at a
    time), so that the two stay interchangeable: same arguments, same outputs, same serialized config."""

    def __init__(
        self,
        num_heads: int,
        d_model: int,
        dropout: float = 0.0,
        use_bias: bool = True,
        kernel_initializer: str = "glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.key_dim = check_heads(d_model, num_heads)
        self.num_heads = num_heads
        self.d_model = d_model
        self.dropout = dropout
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.supports_masking = True  # the output keeps the input's padding positions

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        return (*query_shape[:-1], self.d_model)

    def compute_output_spec(self, query, value=None, key=None, return_attention_scores=False, **kwargs):
        """Symbolic calls (functional models) must also see the (B, h, Tq, Tk) weights when asked for."""
        outputs = keras.KerasTensor((*query.shape[:-1], self.d_model), dtype=self.compute_dtype)
        if not return_attention_scores:
            return outputs
        key_length = (key if key is not None else value if value is not None else query).shape[1]
        weights = keras.KerasTensor(
            (query.shape[0], self.num_heads, query.shape[1], key_length), dtype=self.compute_dtype
        )
        return outputs, weights

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "d_model": self.d_model,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "kernel_initializer": self.kernel_initializer,
        }
