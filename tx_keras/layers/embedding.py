"""Token embedding plus positional encoding: attention itself is order-blind, positions must be added."""

from __future__ import annotations

import math

import keras
from keras import ops

from tx_keras.components import position_classes


@keras.saving.register_keras_serializable(package="tx_keras")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """ids (B, T) -> embeddings (B, T, d_model) scaled by sqrt(d_model), plus position encodings.

    Args:
        vocab_size: number of token ids (id 0 is padding).
        d_model: embedding width.
        max_length: longest sequence (size of the position table).
        positions: "sinusoidal" (fixed, the paper), "learned" (a trained table), "none", "rotary" (nothing
            added here: the attention rotates queries and keys) or a user's class by import path, built as
            `cls(max_length, d_model, name=, dtype=)` and called as `cls(hidden, start_index)`.
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
        added, _ = position_classes(positions)
        self.vocab_size, self.d_model, self.max_length = vocab_size, d_model, max_length
        self.positions, self.scale, self.mask_zero = positions, scale, mask_zero
        self.supports_masking = mask_zero
        self._tokens = keras.layers.Embedding(vocab_size, d_model, name="tokens", dtype=self.dtype_policy)
        self._positions = None  # "none", or rotary (the attention rotates queries and keys instead)
        if added is not None:
            self._positions = added(max_length, d_model, name="positions", dtype=self.dtype_policy)

    def build(self, input_shape):
        self._tokens.build(input_shape)
        if self._positions is not None:
            self._positions.build((*input_shape, self.d_model))
        self.built = True

    @property
    def _learned(self) -> keras.layers.Layer | None:
        """The positions layer if it has weights. Keras saves a layer's children under their attribute
        names, visited in sorted order, and .keras files written before the positions classes existed
        hold the learned table under `_learned`: this name keeps loading them (and saves the same way)."""
        return self._positions if self._positions is not None and self._positions.weights else None

    @property
    def token_table(self):
        """The (vocab_size, d_model) token embeddings: a tied output projection reuses them as its weights."""
        return self._tokens.embeddings

    def call(self, ids, start_index=0):
        """`start_index` is the position of the first id: a cached decoder embeds new tokens from there."""
        embedded = self._tokens(ids)
        if self.scale:
            embedded = embedded * ops.cast(math.sqrt(self.d_model), embedded.dtype)
        if self._positions is not None:
            embedded = self._positions(embedded, start_index=start_index)
        return embedded

    def compute_mask(self, ids, mask=None):
        return ops.not_equal(ids, 0) if self.mask_zero else None

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.d_model)

    def get_config(self) -> dict:
        arguments = ("vocab_size", "d_model", "max_length", "positions", "scale", "mask_zero")
        return {**super().get_config(), **{name: getattr(self, name) for name in arguments}}
