"""The lecture's single attention head: q = Wq x, k = Wk x, v = Wv x, A = softmax(q k^T / sqrt(d_k)) v."""

from __future__ import annotations

import math

import keras
from keras import ops

from tx_keras.kernels import Dense

# Masked scores get this value before the softmax; computed in float32 so it is representable.
_MASKED_SCORE = -1e9


def causal_mask(query_length: int, key_length: int, query_start=0):
    """Boolean (Tq, Tk) mask, True where query i, at position `query_start + i`, may see key j (j <= that
    position): no reading the future. `query_start` > 0 when new queries read a decoding cache."""
    rows = ops.expand_dims(ops.arange(query_length) + query_start, 1)
    cols = ops.expand_dims(ops.arange(key_length), 0)
    return ops.greater_equal(rows, cols)


def combine_masks(
    query_length: int, key_length: int, attention_mask=None, key_mask=None, causal=False, query_start=0
):
    """Merge the three ways a key can be hidden into one boolean (B or 1, Tq, Tk) mask, or None."""
    mask = None
    if attention_mask is not None:
        mask = ops.cast(attention_mask, "bool")
    if key_mask is not None:
        keys = ops.expand_dims(ops.cast(key_mask, "bool"), 1)
        mask = keys if mask is None else ops.logical_and(mask, keys)
    if causal:
        future = ops.expand_dims(causal_mask(query_length, key_length, query_start), 0)
        mask = future if mask is None else ops.logical_and(mask, future)
    return mask


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None, training=None):
    """softmax(q k^T / sqrt(d_k)) v over the last two axes, every query position at once.

    `mask` is True where a query may attend to a key and broadcasts against the (..., Tq, Tk) scores.
    The softmax runs in float32 so masked keys get exactly zero weight even under mixed precision.
    Returns (outputs, weights); the weights are those before attention dropout.

    The scale is a product and the mask an added bias (0 or -1e9, made at the mask's size, without the
    heads axis): TensorFlow's oneDNN graph rewrite fuses matmul, product and sum into one kernel, and a
    sum's gradient passes through where a select's is another pass over the scores.
    """
    d_k = ops.shape(query)[-1]
    scores = ops.matmul(query, ops.swapaxes(key, -1, -2))
    scores = ops.cast(scores, "float32") * (1.0 / math.sqrt(d_k))
    if mask is not None:
        scores = scores + ops.where(mask, 0.0, _MASKED_SCORE)
    weights = ops.softmax(scores, axis=-1)
    weights = ops.cast(weights, value.dtype)
    attended = weights if dropout is None else dropout(weights, training=training)
    return ops.matmul(attended, value), weights


@keras.saving.register_keras_serializable(package="tx_keras")
class SelfAttention(keras.layers.Layer):
    """One attention head, written as the lecture explains it.

    Each token gets its own query, key and value through three learned matrices Wq, Wk, Wv;
    its output is the softmax(q.k / sqrt(d_k))-weighted sum of all values. Pass `context` to attend
    to another sequence (cross-attention): the queries come from `x`, the keys and values from `context`.

    Args:
        key_dim: size d_k of queries and keys.
        value_dim: size of values and of the output; defaults to `key_dim`.
        use_bias: whether Wq, Wk, Wv have biases.
        dropout: dropout on the attention weights during training.

    Masking: `attention_mask` (B, Tq, Tk), `key_mask` (B, Tk, True = real token) and
    `use_causal_mask` are combined; masked keys get weight exactly 0. Returns (outputs (B, Tq,
    value_dim), weights (B, Tq, Tk)).

    Example:
        >>> head = SelfAttention(key_dim=16)
        >>> outputs, weights = head(keras.random.normal((2, 5, 32)))  # (2, 5, 16), (2, 5, 5)
    """

    def __init__(
        self,
        key_dim: int,
        value_dim: int | None = None,
        use_bias: bool = True,
        dropout: float = 0.0,
        kernel_initializer: str = "glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.key_dim, self.value_dim = key_dim, value_dim or key_dim
        self.use_bias, self.dropout, self.kernel_initializer = use_bias, dropout, kernel_initializer
        self.supports_masking = True  # the output keeps the input's padding positions
        dense = dict(use_bias=use_bias, kernel_initializer=kernel_initializer, dtype=self.dtype_policy)
        self._query = Dense(key_dim, name="query", **dense)  # W_q
        self._key = Dense(key_dim, name="key", **dense)  # W_k
        self._value = Dense(self.value_dim, name="value", **dense)  # W_v
        self._dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)

    def build(self, x_shape, context_shape=None):
        self._query.build(x_shape)
        self._key.build(context_shape or x_shape)
        self._value.build(context_shape or x_shape)
        self.built = True

    def call(
        self, x, context=None, *, attention_mask=None, key_mask=None, use_causal_mask=False, training=None
    ):
        """Self-attention over `x` (B, T, d), or cross-attention of `x` over `context` (B, Tk, d)."""
        context = x if context is None else context
        q, k, v = self._query(x), self._key(context), self._value(context)
        mask = combine_masks(ops.shape(q)[1], ops.shape(k)[1], attention_mask, key_mask, use_causal_mask)
        return scaled_dot_product_attention(q, k, v, mask, self._dropout, training)

    def compute_output_shape(self, x_shape, context_shape=None):
        key_length = (context_shape or x_shape)[1]
        return (*x_shape[:-1], self.value_dim), (x_shape[0], x_shape[1], key_length)

    def get_config(self) -> dict:
        arguments = ("key_dim", "value_dim", "use_bias", "dropout", "kernel_initializer")
        return {**super().get_config(), **{name: getattr(self, name) for name in arguments}}
