"""Add + Norm around a sublayer, with the residual and the LayerNorm placement as switches."""

from __future__ import annotations

import keras

from tx_keras.components import resolve
from tx_keras.norm_placement import NORM_MODES

NORM_EPSILON = 1e-6  # the LayerNorm epsilon of every norm in the model (Keras' default is 1e-3)


def build_norm(norm_impl: str, epsilon: float, name: str, dtype) -> keras.layers.Layer:
    """The norm layer `norm_impl` names (components.py): the built-in `LayerNorm` (layer_norm.py) with
    `epsilon`, a user's class as `cls(name=, dtype=)`."""
    options = {"epsilon": epsilon} if norm_impl == "layer_norm" else {}
    return resolve("norm", norm_impl)(name=name, dtype=dtype, **options)


@keras.saving.register_keras_serializable(package="tx_keras")
class AddNorm(keras.layers.Layer):
    """Wraps one sublayer F (attention or FFN) the way the configuration says.

    | norm   | residual=True                | residual=False         |
    |--------|------------------------------|------------------------|
    | post   | LayerNorm(x + drop(F(x)))    | LayerNorm(drop(F(x)))  |
    | pre    | x + drop(F(LayerNorm(x)))    | drop(F(LayerNorm(x)))  |
    | none   | x + drop(F(x))               | drop(F(x))             |

    "post" is the original paper (and the lecture); "pre" is what most modern stacks use. The Add
    lets gradients skip the sublayer; the Norm keeps activations at a stable scale. A block uses it in
    two steps inside its own `call`: `h = add_norm.sublayer_input(x)`, then `x = add_norm(x, F(h))`
    (in a functional model, wrap the two steps in a layer: `sublayer_input` is a method, not a layer call).

    Args:
        residual: add the sublayer's input to its output.
        norm: "post", "pre" or "none".
        dropout: dropout on the sublayer output before the Add (the paper's residual dropout).
        epsilon: LayerNorm epsilon (the built-in norm's).
        norm_impl: the norm layer: "layer_norm" or a user's class by import path (components.py).
    """

    def __init__(
        self,
        residual: bool = True,
        norm: str = "post",
        dropout: float = 0.0,
        epsilon: float = NORM_EPSILON,
        norm_impl: str = "layer_norm",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if norm not in NORM_MODES:
            raise ValueError(f"norm={norm!r} is not a norm placement; choose one of: {', '.join(NORM_MODES)}")
        self.residual, self.norm, self.dropout = residual, norm, dropout
        self.epsilon, self.norm_impl = epsilon, norm_impl
        self.supports_masking = True  # the output keeps the input's padding positions
        self._dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self._norm = build_norm(norm_impl, epsilon, "norm", self.dtype_policy) if norm != "none" else None

    def build(self, inputs_shape, sublayer_output_shape=None):
        if self._norm is not None and not self._norm.built:  # sublayer_input may have built it already
            self._norm.build(inputs_shape)
        self.built = True

    def sublayer_input(self, inputs):
        """What the sublayer reads: the normalised input in pre-LN, the input itself otherwise."""
        return self._norm(inputs) if self.norm == "pre" else inputs

    def call(self, inputs, sublayer_output, training=None):
        outputs = self._dropout(sublayer_output, training=training)
        if self.residual:
            outputs = inputs + outputs
        return self._norm(outputs) if self.norm == "post" else outputs

    def compute_output_shape(self, inputs_shape, sublayer_output_shape=None):
        return inputs_shape

    def get_config(self) -> dict:
        arguments = ("residual", "norm", "dropout", "epsilon", "norm_impl")
        return {**super().get_config(), **{name: getattr(self, name) for name in arguments}}
