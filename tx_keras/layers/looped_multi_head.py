"""Multi-head attention as the lecture explains it: a loop over h single heads, concatenated, then W_o."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.kernels import Dense
from tx_keras.layers.attention import SelfAttention, scaled_dot_product_attention
from tx_keras.layers.multi_head import MultiHeadAttention
from tx_keras.layers.multi_head_base import MultiHeadBase


@keras.saving.register_keras_serializable(package="tx_keras")
class LoopedMultiHeadAttention(MultiHeadBase):
    """h `SelfAttention` heads, each with its own Wq_i, Wk_i, Wv_i, run one after another.

    Same function and call (masks, rotary positions, decoding cache: see `MultiHeadBase`) as the fused
    `MultiHeadAttention` (what runs by default), but readable: head i projects with its own Wq_i, Wk_i,
    Wv_i, attends on its own, `concat(head_1..head_h) @ W_o`. `copy_from(fused)` loads a fused layer's
    weights so both forms can be compared number for number.
    """

    def __init__(self, num_heads: int, d_model: int, *args, **kwargs):
        """The arguments of every form (`MultiHeadBase`)."""
        super().__init__(num_heads, d_model, *args, **kwargs)
        self._heads = [
            SelfAttention(
                self.key_dim,
                use_bias=self.use_bias,
                dropout=self.dropout,
                kernel_initializer=self.kernel_initializer,
                name=f"head_{i + 1}",
                dtype=self.dtype_policy,
            )
            for i in range(num_heads)
        ]
        self._output = Dense(
            d_model,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            name="output",
            dtype=self.dtype_policy,
        )

    def build(self, query_shape, value_shape=None, key_shape=None):
        for head in self._heads:
            head.build(query_shape, key_shape or value_shape)
        self._output.build((*query_shape[:-1], self.d_model))
        self.built = True

    @property
    def output_weight(self) -> keras.Variable:
        """The (h * d_k, d_model) kernel of W_o over concat(heads): head i's rows i * d_k .. (i + 1) * d_k."""
        return self._output.kernel

    def _project(self, query, value, key) -> tuple:
        """Head i's Wq_i x, Wk_i x, Wv_i x, stacked into the (B, h, T, d_k) layout the cache shares."""

        def each_head(projection: str, inputs):
            return ops.stack([getattr(head, projection)(inputs) for head in self._heads], axis=1)

        if value is None:
            return each_head("_query", query), None, None
        return each_head("_query", query), each_head("_key", key), each_head("_value", value)

    def _read(self, queries, keys, values, mask, query_start, training) -> tuple:
        """head_i = softmax(q_i k_i^T / sqrt(d_k)) v_i, one head after another; concat(heads) @ W_o."""
        heads, weights = [], []
        for i, head in enumerate(self._heads):
            output, weight = scaled_dot_product_attention(
                queries[:, i], keys[:, i], values[:, i], mask, head._dropout, training
            )
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
