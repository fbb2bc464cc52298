"""LayerNorm over the last axis with its gradient written out: the built-in layer's weights and numbers, a
fraction of its backward ops."""

from __future__ import annotations

import keras
from keras import ops


def _last_axis_norm(rows, gamma, beta, epsilon: float):
    """(N, d) float32 rows -> their LayerNorm, with the textbook backward pass.

    Differentiating Keras' `layer_normalization` graph gives every broadcast its own reduction, reshape
    and tile, most of them passes over the (N, d) activations: one norm's traced forward and backward
    graph has 86 ops, 55 written out (tests/test_layer_norm.py). The backward pass is four reductions
    and a few element-wise products: with xhat = (x - mean) * inv,
    dx = inv * (g' - mean(g') - xhat * mean(g' * xhat)), where g' = dy * gamma.
    """

    @ops.custom_gradient
    def norm(rows, gamma, beta):
        mean = ops.mean(rows, axis=-1, keepdims=True)
        centred = rows - mean
        inv = ops.rsqrt(ops.mean(ops.square(centred), axis=-1, keepdims=True) + epsilon)
        normalised = centred * inv

        def backward(*args, upstream=None):
            upstream = args[0] if upstream is None else upstream
            scaled = upstream * gamma
            d_rows = inv * (
                scaled
                - ops.mean(scaled, axis=-1, keepdims=True)
                - normalised * ops.mean(scaled * normalised, axis=-1, keepdims=True)
            )
            return d_rows, ops.sum(upstream * normalised, axis=0), ops.sum(upstream, axis=0)

        return normalised * gamma + beta, backward

    return norm(rows, gamma, beta)


@keras.saving.register_keras_serializable(package="tx_keras")
class LayerNorm(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` with a hand-written gradient when it normalises the last axis with
    both gamma and beta (the Transformer's case); any other setting runs the built-in computation.

    Same weights (gamma, beta), config and outputs as the built-in layer, so checkpoints and saved
    models interchange; it computes in float32 under mixed precision, as the built-in one does. A
    training step of tx-bench's size takes 4-5 % less CPU time with it (its ten norms, removed, were a
    ~15 % bound; docs/decisions/layernorm-gradient.md).
    """

    def call(self, inputs):
        rank = len(inputs.shape)
        last_axis_only = [axis % rank for axis in self.axis] == [rank - 1]
        if not last_axis_only or self.rms_scaling or not (self.center and self.scale):
            return super().call(inputs)
        width = inputs.shape[-1]
        rows = ops.reshape(ops.cast(inputs, "float32"), (-1, width))
        gamma = ops.cast(self.gamma, "float32")
        beta = ops.cast(self.beta, "float32")
        outputs = _last_axis_norm(rows, gamma, beta, self.epsilon)
        return ops.cast(ops.reshape(outputs, ops.shape(inputs)), self.compute_dtype)
