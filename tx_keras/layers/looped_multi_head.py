"""Multi-head attention as the lecture explains it: a loop over h single heads, concatenated, then W_o."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.layers.attention import SelfAttention, combine_masks, scaled_dot_product_attention
from tx_keras.layers.multi_head import MultiHeadAttention
from tx_keras.layers.multi_head_base import MultiHeadBase


@keras.saving.register_keras_serializable(package="tx_keras")
class LoopedMultiHeadAttention(MultiHeadBase):
    """h `SelfAttention` heads, each with its own Wq_i, Wk_i, Wv_i, run one after another.

    Same function and call signature as the fused `MultiHeadAttention` (what runs by default), but
    readable: `head_i = SelfAttention_i(x)`, `concat(head_1..head_h) @ W_o`. `copy_from(fused)` loads a
    fused layer's weights so both forms can be compared number for number.
    """

    def __init__(
        self,
        num_heads: int,
        d_model: int,
        dropout: float = 0.0,
        use_bias: bool = True,
        kernel_initializer: str = "glorot_uniform",
        **kwargs,
    ):
        super().__init__(num_heads, d_model, dropout, use_bias, kernel_initializer, **kwargs)
        self._heads = [
            SelfAttention(
                self.key_dim,
                use_bias=use_bias,
                dropout=dropout,
                kernel_initializer=kernel_initializer,
                name=f"head_{i + 1}",
                dtype=self.dtype_policy,
            )
            for i in range(num_heads)
        ]
        self._output = keras.layers.Dense(
            d_model,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            name="output",
            dtype=self.dtype_policy,
        )

    def build(self, query_shape, value_shape=None, key_shape=None):
        for head in self._heads:
            head.build(query_shape, value_shape, key_shape)
        self._output.build((*query_shape[:-1], self.d_model))
        self.built = True

    def call(
        self,
        query,
        value=None,
        key=None,
        attention_mask=None,
        key_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        training=None,
    ):
        heads, weights = [], []
        for head in self._heads:
            output, weight = head(
                query,
                value,
                key,
                attention_mask=attention_mask,
                key_mask=key_mask,
                use_causal_mask=use_causal_mask,
                training=training,
            )
            heads.append(output)
            weights.append(weight)
        outputs = self._output(ops.concatenate(heads, axis=-1))
        return (outputs, ops.stack(weights, axis=1)) if return_attention_scores else outputs

    def project_key_value(self, value):
        """(B, T, d) -> keys and values (B, h, T, d_k), every head's Wk_i x and Wv_i x stacked: the
        decoding cache's layout, shared with the fused form."""
        keys = ops.stack([head._key(value) for head in self._heads], axis=1)
        values = ops.stack([head._value(value) for head in self._heads], axis=1)
        return keys, values

    def attend(self, query, keys, values, key_mask=None, query_position=0):
        """Inference-time attention of `query` (B, Tq, d) over already projected `keys`/`values`
        (B, h, Tk, d_k), head by head; `query_position` is unused, as in the fused form.
        Returns (outputs (B, Tq, d), weights (B, h, Tq, Tk))."""
        mask = None if key_mask is None else combine_masks(1, 1, key_mask=key_mask)
        heads, weights = [], []
        for i, head in enumerate(self._heads):
            output, weight = scaled_dot_product_attention(head._query(query), keys[:, i], values[:, i], mask)
            heads.append(output)
            weights.append(weight)
        return self._output(ops.concatenate(heads, axis=-1)), ops.stack(weights, axis=1)

    def copy_from(self, fused: MultiHeadAttention) -> None:
        """Take head i's Wq_i, Wk_i, Wv_i and the rows of W_o out of a fused layer's kernels."""
        for i, head in enumerate(self._heads):
            for name, dense in (("query", head._query), ("key", head._key), ("value", head._value)):
                kernel = ops.convert_to_numpy(getattr(fused, f"{name}_kernel"))[:, i, :]
                params = [kernel]
                if self.use_bias:
                    params.append(ops.convert_to_numpy(getattr(fused, f"{name}_bias"))[i])
                dense.set_weights(params)
        params = [ops.convert_to_numpy(fused.output_kernel).reshape(self.d_model, self.d_model)]
        if self.use_bias:
            params.append(ops.convert_to_numpy(fused.output_bias))
        self._output.set_weights(params)


# The two forms of multi-head attention, by the name the `model.attention_impl` config key uses.
ATTENTION_IMPLEMENTATIONS = {"fused": MultiHeadAttention, "looped": LoopedMultiHeadAttention}
