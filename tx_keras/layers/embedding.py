"""Token embedding plus positional encoding: attention itself is order-blind, positions must be added."""

from __future__ import annotations

import math

import keras
import numpy as np
from keras import ops

POSITION_KINDS = ("sinusoidal", "learned", "none")


def sinusoidal_positions(length: int, depth: int) -> np.ndarray:
    """The paper's table: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same), interleaved."""
    positions = np.arange(length)[:, None]
    rates = 1.0 / np.power(10000.0, (2 * (np.arange(depth) // 2)) / depth)
    angles = positions * rates[None, :]
    table = np.zeros((length, depth), dtype="float32")
    table[:, 0::2] = np.sin(angles[:, 0::2])
    table[:, 1::2] = np.cos(angles[:, 1::2])
    return table


@keras.saving.register_keras_serializable(package="tx_keras")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """ids (B, T) -> embeddings (B, T, d_model) scaled by sqrt(d_model), plus position encodings.

    Args:
        vocab_size: number of token ids (id 0 is padding).
        d_model: embedding width.
        max_length: longest sequence (size of the position table).
        positions: "sinusoidal" (fixed, the paper), "learned" (a trained table) or "none".
        scale: multiply token embeddings by sqrt(d_model) so they are not drowned by the positions.
        mask_zero: id 0 is padding; the layer emits a (B, T) mask that Keras propagates.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        max_length: int,
        positions: str = "sinusoidal",
        scale: bool = True,
        mask_zero: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if positions not in POSITION_KINDS:
            raise ValueError(
                f"positions={positions!r} is not a positional encoding; "
                f"choose one of: {', '.join(POSITION_KINDS)}"
            )
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.max_length = max_length
        self.positions = positions
        self.scale = scale
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self._tokens = keras.layers.Embedding(vocab_size, d_model, name="tokens", dtype=self.dtype_policy)
        self._learned = (
            keras.layers.Embedding(max_length, d_model, name="positions", dtype=self.dtype_policy)
            if positions == "learned"
            else None
        )
        self._table = sinusoidal_positions(max_length, d_model) if positions == "sinusoidal" else None

    def build(self, input_shape):
        self._tokens.build(input_shape)
        if self._learned is not None:
            self._learned.build((None,))
        self.built = True

    @property
    def token_table(self):
        """The (vocab_size, d_model) token embeddings: a tied output projection reuses them as its weights."""
        return self._tokens.embeddings

    def call(self, ids, start=0):
        """`start` is the position of the first id: a cached decoder embeds one new token at position t."""
        embedded = self._tokens(ids)
        if self.scale:
            embedded = embedded * ops.cast(math.sqrt(self.d_model), embedded.dtype)
        positions = ops.arange(ops.shape(ids)[1]) + start
        if self._learned is not None:
            embedded = embedded + self._learned(positions)[None]
        elif self._table is not None:
            table = ops.cast(ops.convert_to_tensor(self._table), embedded.dtype)
            embedded = embedded + ops.take(table, positions, axis=0)[None]
        return embedded

    def compute_mask(self, ids, mask=None):
        return ops.not_equal(ids, 0) if self.mask_zero else None

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.d_model)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "d_model": self.d_model,
            "max_length": self.max_length,
            "positions": self.positions,
            "scale": self.scale,
            "mask_zero": self.mask_zero,
        }
