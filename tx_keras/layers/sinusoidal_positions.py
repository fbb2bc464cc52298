"""The paper's fixed positional encoding: sines and cosines of geometric wavelengths, added to tokens."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops


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
class SinusoidalPositions(keras.layers.Layer):
    """Adds the (max_length, d_model) sinusoidal table's rows to embedded tokens; no weights.

    Call args: `hidden` (B, T, d_model), `start_index`: the position of hidden[:, 0] (a decoding step's).
    """

    def __init__(self, max_length: int, d_model: int, **kwargs):
        super().__init__(**kwargs)
        self.max_length, self.d_model = max_length, d_model
        self._table = sinusoidal_positions(max_length, d_model)

    def call(self, hidden, start_index=0):
        positions = ops.arange(ops.shape(hidden)[1]) + start_index
        table = ops.cast(ops.convert_to_tensor(self._table), hidden.dtype)
        return hidden + ops.take(table, positions, axis=0)[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "max_length": self.max_length, "d_model": self.d_model}
