"""Multi-head attention, fused: all h heads' projections, scores and outputs in single einsums."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.kernels import project_rows
from tx_keras.layers.attention import scaled_dot_product_attention
from tx_keras.layers.head_layout import HeadLayout


@keras.saving.register_keras_serializable(package="tx_keras")
class MultiHeadAttention(HeadLayout):
    """h attention heads computed at once, concatenated, then mixed by one output matrix W_o.

    Head i has its own Wq_i, Wk_i, Wv_i: they are the slices `[:, i, :]` of the (d_in, h, d_k)
    kernels, so one einsum projects every head in parallel; `W_o` is the (h, d_k, d_model) kernel that
    maps the concatenated heads back to d_model. The weight layout matches
    `keras.layers.MultiHeadAttention`, which makes the two directly comparable.
    `LoopedMultiHeadAttention` computes the same function head by head, as the lecture explains it.

    Args: those of every form (`MultiHeadBase`: num_heads, d_model, dropout, use_bias, kernel_initializer,
    position_rotation), and
        fused_qkv: compute the query, key and value projections of self-attention (key and value of
            cross-attention) as one matmul over the concatenated kernels; same weights, same outputs,
            fewer and larger matmuls (faster on CPU).

    Call args and the decoding cache: see `MultiHeadBase`.

    Example:
        >>> mha = MultiHeadAttention(num_heads=4, d_model=32)
        >>> y, w = mha(x, return_attention_scores=True)  # x: (B, T, 32) -> y: (B, T, 32), w: (B, 4, T, T)
    """

    def __init__(self, num_heads: int, d_model: int, *args, fused_qkv: bool = False, **kwargs):
        super().__init__(num_heads, d_model, *args, **kwargs)
        self.fused_qkv = fused_qkv
        self._dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def _projection(self, name: str, input_dim: int) -> None:
        shape = (input_dim, self.num_heads, self.key_dim)
        setattr(
            self,
            f"{name}_kernel",
            self.add_weight(name=f"{name}_kernel", shape=shape, initializer=self.kernel_initializer),
        )
        if self.use_bias:
            setattr(
                self,
                f"{name}_bias",
                self.add_weight(name=f"{name}_bias", shape=shape[1:], initializer="zeros"),
            )

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = value_shape or query_shape
        self._projection("query", query_shape[-1])
        self._projection("key", (key_shape or value_shape)[-1])
        self._projection("value", value_shape[-1])
        self.output_kernel = self.add_weight(
            name="output_kernel",
            shape=(self.num_heads, self.key_dim, self.d_model),
            initializer=self.kernel_initializer,
        )
        if self.use_bias:
            self.output_bias = self.add_weight(name="output_bias", shape=(self.d_model,), initializer="zeros")
        self.built = True

    def _project_fused(self, inputs, names: tuple[str, ...]) -> list:
        """Several projections of the same input in one matmul over kernels concatenated along the heads."""
        kernel = ops.concatenate([self._flat_kernel(name) for name in names], axis=1)
        bias = ops.concatenate([self._bias(name) for name in names], 0) if self.use_bias else None
        rows = project_rows(inputs, kernel, bias)
        return ops.split(self._split_heads(rows, inputs, len(names) * self.num_heads), len(names), axis=1)

    def _project(self, query, value, key) -> tuple:
        """Fused into one matmul where the same tensor feeds several projections (with `fused_qkv`), except
        for a single position (a decoding step): there, concatenating the kernels at every step costs more
        than the three small matmuls it merges (cached greedy decoding at tx-bench's size took 12-20 %
        more CPU fused; docs/decisions/fused-qkv.md)."""
        if value is None:
            return self._project_one("query", query), None, None
        if self.fused_qkv and key is value and query.shape[1] != 1:
            if value is query:
                return tuple(self._project_fused(query, ("query", "key", "value")))
            return self._project_one("query", query), *self._project_fused(value, ("key", "value"))
        return (
            self._project_one("query", query),
            self._project_one("key", key),
            self._project_one("value", value),
        )

    def _read(self, queries, keys, values, mask, query_start, training) -> tuple:
        if mask is not None:
            mask = ops.expand_dims(mask, 1)  # broadcast over heads
        heads, weights = scaled_dot_product_attention(queries, keys, values, mask, self._dropout, training)
        return self._combine(heads), weights

    def get_config(self) -> dict:
        return {**super().get_config(), "fused_qkv": self.fused_qkv}
