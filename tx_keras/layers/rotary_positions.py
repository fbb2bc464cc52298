"""Rotary position embedding (RoFormer, Su et al. 2021): positions as rotations of queries and keys."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="tx_keras")
class RotaryPositions(keras.layers.Layer):
    """Rotates each pair of features of a query or key by an angle proportional to its position.

    Feature pair i turns by `position * max_wavelength^(-2i / key_dim)`. A query at position m and a key at
    n, both rotated, have the dot product of the unrotated pair turned by m - n: attention scores see only
    relative positions, and nothing is added to the embeddings. Self-attention rotates its queries and keys
    (`position_rotation` of the attention layers), cross-attention never does. Pairs are (i, i + d_k/2), the
    layout of GPT-NeoX and KerasHub's RotaryEmbedding: RoFormer's (2i, 2i + 1) up to a fixed permutation of
    the features, which the learned projections absorb.

    Args:
        key_dim: d_k, the size of each head's queries and keys (even).
        max_wavelength: the slowest pair's wavelength, as the sinusoidal table's 10000.

    Call args: `x` (..., T, key_dim), `start_index`: the position of x[..., 0, :] (a decoding step's).

    Example:
        >>> rotate = RotaryPositions(key_dim=16)
        >>> q = rotate(keras.random.normal((2, 4, 5, 16)), start_index=3)  # positions 3..7
    """

    rotates_queries_and_keys = True  # read by components.position_classes: nothing added at the embedding

    def __init__(self, key_dim: int, max_wavelength: float = 10000.0, **kwargs):
        super().__init__(**kwargs)
        if key_dim < 2 or key_dim % 2:
            raise ValueError(f"rotary positions need an even key_dim (d_model / num_heads), got {key_dim}")
        self.key_dim = key_dim
        self.max_wavelength = max_wavelength

    def call(self, x, start_index=0):
        positions = ops.cast(ops.arange(ops.shape(x)[-2]) + start_index, "float32")
        half = self.key_dim // 2
        rates = ops.power(self.max_wavelength, -ops.arange(half, dtype="float32") * 2.0 / self.key_dim)
        angles = ops.expand_dims(positions, 1) * ops.expand_dims(rates, 0)  # (T, d_k / 2)
        cos, sin = ops.cast(ops.cos(angles), x.dtype), ops.cast(ops.sin(angles), x.dtype)
        first, second = x[..., :half], x[..., half:]
        return ops.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "key_dim": self.key_dim, "max_wavelength": self.max_wavelength}
