"""What every form of multi-head attention shares: its arguments, its call (masks, rotary positions, the
decoding cache), its output shapes and its config."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.layers.attention import combine_masks
from tx_keras.layers.position_write import write_at


def check_heads(d_model: int, num_heads: int) -> int:
    """Per-head size d_k = d_model / h; the heads must split d_model exactly so concat gives d_model back."""
    if num_heads < 1 or d_model < 1 or d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} must be a positive multiple of num_heads={num_heads} "
            f"(each head gets d_model/num_heads features)"
        )
    return d_model // num_heads


def attention_result(outputs, weights, cache, return_attention_scores: bool):
    """The call contract's return: outputs, then the weights if asked for, then the cache if one was given."""
    result = (outputs, weights) if return_attention_scores else (outputs,)
    if cache is not None:
        result += (cache,)
    return result if len(result) > 1 else outputs


class MultiHeadBase(keras.layers.Layer):
    """The common ground of `MultiHeadAttention` (fused), `LoopedMultiHeadAttention` (one head at a time)
    and `AlignedAttention`, so that they stay interchangeable: same arguments, same call, same outputs,
    same serialized config. A form supplies `_project` (its projections, (B, h, T, d_k) each) and `_read`
    (attention over them); `call` and the arguments every form takes are written here once: a form's
    `__init__` names `num_heads` and `d_model`, passes the rest on (`*args, **kwargs`) and adds only its own.

    Args:
        num_heads: number of heads h.
        d_model: model width; must be divisible by `num_heads` (d_k = d_model / h).
        dropout: dropout on the attention weights during training.
        use_bias: whether the projections have biases.
        kernel_initializer: initializer of the projection kernels.
        position_rotation: a layer that rotates queries and keys by position (`RotaryPositions`), or None.

    Call args: `query` (B, Tq, d), `value` (B, Tk, d) for cross-attention (defaults to `query`), `key`
    (defaults to `value`), `attention_mask` (B, Tq, Tk), `key_mask` (B, Tk), `use_causal_mask`,
    `return_attention_scores`: also return the (B, h, Tq, Tk) weights.
    Decoding: `cache` (2, B, h, T_cache, d_k) holds keys (index 0) and values (1): on the leading axis each
    is one contiguous half, which TensorFlow slices without a copy (KerasHub's (B, 2, ...) copies both
    halves at every step and layer, cross-attention included). With `cache_update_index`
    the new keys/values are written there and attention reads the whole cache (`key_mask` (B, T_cache)
    hides unwritten or padded slots); without it the cache is read as it is (cross-attention once filled).
    The cache comes back last in the result. The queries sit at `cache_update_index + arange(Tq)`
    (`query_start` overrides it for a form that reads by position: the aligned cross-attention while
    decoding); a `position_rotation` layer (rotary positions) rotates queries and keys there.

    Masking a head (head importance, diagnostics/head_importance.py; the explorer's knock-out): head i's
    whole contribution to the output is its term of `concat(heads) @ W_o`, the rows i * d_k .. (i + 1) * d_k
    of `output_weight` (viewed as (h, d_k, d_model) in every form's layout). Zeroing them removes that
    head exactly (the output bias stays); assigning the saved rows back restores the layer bit for bit.
    """

    def __init__(
        self,
        num_heads: int,
        d_model: int,
        dropout: float = 0.0,
        use_bias: bool = True,
        kernel_initializer: str = "glorot_uniform",
        position_rotation: keras.layers.Layer | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.key_dim = check_heads(d_model, num_heads)
        self.num_heads, self.d_model, self.dropout = num_heads, d_model, dropout
        self.use_bias, self.kernel_initializer = use_bias, kernel_initializer
        self.position_rotation = position_rotation
        self.supports_masking = True  # the output keeps the input's padding positions

    @property
    def output_weight(self) -> keras.Variable:
        """W_o, whose rows head by head are each head's contribution to the output (see head masking)."""
        raise NotImplementedError

    def _project(self, query, value, key) -> tuple:
        """(queries, keys, values) of the inputs, each (B, h, T, d_k); keys and values are None when `value`
        is (a filled cache is read instead)."""
        raise NotImplementedError

    def _read(self, queries, keys, values, mask, query_start, training) -> tuple:
        """(outputs (B, Tq, d_model), weights (B, h, Tq, Tk)) of the queries over keys and values;
        `mask` (B or 1, Tq, Tk) is True where a query may see a key."""
        raise NotImplementedError

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
        cache=None,
        cache_update_index=None,
        query_start=None,
    ):
        reading = cache is not None and cache_update_index is None  # a filled cache, read as it is
        value = query if value is None else value
        key = value if key is None else key
        queries, keys, values = self._project(query, None if reading else value, None if reading else key)
        start = cache_update_index if query_start is None else query_start
        start = 0 if start is None else start
        if self.position_rotation is not None:
            queries = self.position_rotation(queries, start_index=start)
            keys = None if keys is None else self.position_rotation(keys, start_index=start)
        if cache is not None:
            if not reading:
                cache = write_at(cache, cache_update_index, ops.stack([keys, values]), axis=3)
            keys, values = cache[0], cache[1]
        mask = combine_masks(
            ops.shape(query)[1], ops.shape(keys)[2], attention_mask, key_mask, use_causal_mask, start
        )
        outputs, weights = self._read(queries, keys, values, mask, start, training)
        return attention_result(outputs, weights, cache, return_attention_scores)

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
        arguments = ("num_heads", "d_model", "dropout", "use_bias", "kernel_initializer")
        rotation = self.position_rotation
        return {
            **super().get_config(),
            **{name: getattr(self, name) for name in arguments},
            "position_rotation": None if rotation is None else keras.saving.serialize_keras_object(rotation),
        }

    @classmethod
    def from_config(cls, config: dict) -> MultiHeadBase:
        rotation = config.get("position_rotation")
        if rotation is not None:
            config = {**config, "position_rotation": keras.saving.deserialize_keras_object(rotation)}
        return super().from_config(config)
