"""Attention switched off (`model.attention=none`): each position reads only the position aligned with it.

The control for "attention gives context": with the mixing across positions removed, what is left is a
per-position predictor, so anything the model still gets right needs no context.
"""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.layers.head_layout import HeadLayout


def aligned_weights(query_length, key_length, mask=None, query_position=0):
    """One-hot (B or 1, Tq, Tk) weights: query i (at `query_position + i` in its sequence) reads key i, or the
    last key it may see before that (a source shorter than the target: its last word).

    `mask` (B or 1, Tq, Tk), True where a key may be seen, is applied first; a query that may see no key
    at all gets a row of zeros.
    """
    positions = ops.expand_dims(ops.arange(query_length) + query_position, 1)
    keys = ops.arange(key_length)
    allowed = ops.expand_dims(ops.less_equal(ops.expand_dims(keys, 0), positions), 0)
    if mask is not None:
        allowed = ops.logical_and(allowed, mask)
    last = ops.max(ops.where(allowed, keys, -1), axis=-1, keepdims=True)
    return ops.equal(keys, last)


@keras.saving.register_keras_serializable(package="tx_keras")
class AlignedAttention(HeadLayout):
    """Multi-head attention with the attention weights fixed to the identity: self-attention position t
    reads itself, cross-attention decoder position t reads encoder position t (the last source word once
    the target is longer). The value and output projections W_v, W_o remain (same layout as the fused
    `MultiHeadAttention`), so a block keeps its sublayer and only the context is gone; there are no W_q,
    W_k. Same call (see `MultiHeadBase`) and outputs as the other forms, weights (B, h, Tq, Tk) one-hot;
    no rotary positions (there are no queries or keys to rotate). While decoding, the cross-attention
    reads a filled cache, so the decoder passes where the queries sit as `query_start`.

    Example:
        >>> y = AlignedAttention(num_heads=4, d_model=32)(x)  # y[:, t] depends on x[:, t] only
    """

    def __init__(self, num_heads: int, d_model: int, *args, **kwargs):
        """The arguments of every form (`MultiHeadBase`); no `position_rotation`: nothing to rotate."""
        super().__init__(num_heads, d_model, *args, **kwargs)
        self._dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = value_shape or query_shape
        self.value_kernel = self.add_weight(
            name="value_kernel",
            shape=(value_shape[-1], self.num_heads, self.key_dim),
            initializer=self.kernel_initializer,
        )
        self.output_kernel = self.add_weight(
            name="output_kernel",
            shape=(self.num_heads, self.key_dim, self.d_model),
            initializer=self.kernel_initializer,
        )
        if self.use_bias:
            self.value_bias = self.add_weight(
                name="value_bias", shape=(self.num_heads, self.key_dim), initializer="zeros"
            )
            self.output_bias = self.add_weight(name="output_bias", shape=(self.d_model,), initializer="zeros")
        self.built = True

    def _project(self, query, value, key) -> tuple:
        """No W_q, W_k: the queries are the inputs themselves (only their positions count) and the
        values stand in for the keys in the cache layout the other forms share."""
        if value is None:
            return query, None, None
        projected = self._project_one("value", value)
        return query, projected, projected

    def _read(self, queries, keys, values, mask, query_start, training) -> tuple:
        """Aligned one-hot weights over the values: outputs (B, Tq, d) and every head's (B, h, Tq, Tk)."""
        shape = ops.shape(values)
        weights = aligned_weights(ops.shape(queries)[1], shape[2], mask, query_start)
        weights = ops.broadcast_to(
            ops.expand_dims(ops.cast(weights, values.dtype), 1),
            (shape[0], self.num_heads, ops.shape(weights)[-2], shape[2]),
        )
        heads = ops.matmul(self._dropout(weights, training=training), values)
        return self._combine(heads), weights
