"""The position-wise feed-forward network: the per-token non-linear capacity between attention layers."""

from __future__ import annotations

import keras

from tx_keras.kernels import Dense


@keras.saving.register_keras_serializable(package="tx_keras")
class FeedForward(keras.layers.Layer):
    """Dense(dff, activation) -> dropout -> Dense(d_model), applied to every position independently.

    Attention only mixes tokens with softmax weights; this is where each token is transformed on its own
    (a key-value memory, Geva et al. 2021). The residual dropout after it lives in `AddNorm`.

    Args:
        d_model: input and output width.
        dff: hidden width (the paper uses 4 * d_model).
        activation: hidden activation.
        dropout: dropout on the hidden activations during training.
    """

    def __init__(
        self,
        d_model: int,
        dff: int,
        activation: str = "relu",
        dropout: float = 0.0,
        kernel_initializer: str = "glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if d_model < 1 or dff < 1:
            raise ValueError(f"d_model={d_model} and dff={dff} must be positive")
        self.d_model, self.dff, self.activation = d_model, dff, activation
        self.dropout, self.kernel_initializer = dropout, kernel_initializer
        self.supports_masking = True  # the output keeps the input's padding positions
        self._hidden = Dense(
            dff,
            activation=activation,
            kernel_initializer=kernel_initializer,
            name="hidden",
            dtype=self.dtype_policy,
        )
        self._dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self._output = Dense(
            d_model, kernel_initializer=kernel_initializer, name="output", dtype=self.dtype_policy
        )

    def build(self, input_shape):
        self._hidden.build(input_shape)
        self._output.build((*input_shape[:-1], self.dff))
        self.built = True

    def call(self, inputs, training=None):
        hidden = self._dropout(self._hidden(inputs), training=training)
        return self._output(hidden)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.d_model)

    def get_config(self) -> dict:
        arguments = ("d_model", "dff", "activation", "dropout", "kernel_initializer")
        return {**super().get_config(), **{name: getattr(self, name) for name in arguments}}
