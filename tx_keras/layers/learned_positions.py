"""Learned positional encoding: a trained (max_length, d_model) table, one row per position."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="tx_keras")
class LearnedPositions(keras.layers.Layer):
    """Adds a trained row per position to embedded tokens (BERT's and GPT-2's form).

    The table is the weight `embeddings`, initialised as `keras.layers.Embedding` does, so a model keeps the
    weight path (`.../embedding/positions/embeddings`) and the numbers it had when this was an Embedding.

    Call args: `hidden` (B, T, d_model), `start_index`: the position of hidden[:, 0] (a decoding step's).
    """

    def __init__(self, max_length: int, d_model: int, **kwargs):
        super().__init__(**kwargs)
        self.max_length, self.d_model = max_length, d_model

    def build(self, hidden_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings", shape=(self.max_length, self.d_model), initializer="uniform"
        )
        self.built = True

    def call(self, hidden, start_index=0):
        positions = ops.arange(ops.shape(hidden)[1]) + start_index
        return hidden + ops.take(self.embeddings, positions, axis=0)[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "max_length": self.max_length, "d_model": self.d_model}
