"""Keras' Dense, computed the way this CPU runs fastest: one 2-D matmul of the flattened rows, its bias
fused into the product, its bias gradient summed in float32.

The lecture's blocks build their W_q, W_k, W_v, W_o and FFN matrices from this `Dense` exactly as from
`keras.layers.Dense` (same arguments, weights, config and outputs) and call it as `q = self._query(x)`;
everything below is why it is faster, and `project_rows` is the same product for the layers that keep
their kernels in `keras.layers.MultiHeadAttention`'s layout (the fused heads) or tie them to an embedding.
"""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.runtime.cpu_flags import cpu_flags

# Columns the bias takes in `_matmul_with_bias_row`'s product: a one and zeros, so that the inner
# dimension stays a multiple of 32, the depth of an AMX tile of bf16 values.
BIAS_COLUMNS = 32


@keras.saving.register_keras_serializable(package="tx_keras")
class Dense(keras.layers.Dense):
    """`keras.layers.Dense`, computed as `project_rows`: the same function, weights and config.

    Named as Keras' own on purpose: a saved model file stores a sublayer held in a list (the Transformer's
    `layers`, its vocabulary projection among them) under its class name, so this name keeps every saved
    `model.keras` loading. Quantized layers keep Dense's own call, which dequantizes.
    """

    def call(self, inputs, training=None):
        if self.quantization_mode is not None:
            return super().call(inputs, training=training)
        dtype = self.compute_dtype
        bias = ops.cast(self.bias, dtype) if self.use_bias else None
        rows = project_rows(ops.cast(inputs, dtype), ops.cast(self.kernel, dtype), bias)
        return ops.reshape(self.activation(rows), (*ops.shape(inputs)[:-1], self.units))

    def compute_mask(self, inputs, mask=None):
        """No Keras mask on the output, where Keras' Dense passes its input's on: the rows are positions,
        and the caller decides what padding means (the Transformer's logits carry none, so a Keras loss a
        user compiles averages over every position, padding labels included, as its docstring says)."""
        return None

    def quantize(self, mode=None, type_check=True, config=None):
        """Keras quantizes the Dense class only, not a subclass that may compute otherwise: this one hands
        a quantized layer to Dense's own call."""
        super().quantize(mode, type_check=False, config=config)


def project_rows(inputs, kernel, bias=None):
    """(..., d_in) -> (N, d_out): every position's row times `kernel`, plus `bias`.

    Keras' Dense multiplies a 3-D input through `tensordot`, which reshapes the matmul's result back to
    3-D before the bias is added; TensorFlow's oneDNN kernels (on by default on AVX-512 CPUs) fuse a
    MatMul with the bias add and ReLU that follow it into one kernel only when nothing sits between them.
    Flattening the rows first gives them that pattern; the caller reshapes the (N, d_out) result once.
    """
    rows = ops.reshape(inputs, (-1, ops.shape(kernel)[0]))
    if bias is None:
        return ops.matmul(rows, kernel)
    # Read as tensors here: a custom gradient that reads a variable itself must return that variable's
    # gradient separately (`ops.convert_to_tensor` returns a Keras variable unchanged; a cast reads it).
    product = _matmul_with_bias_row if bias_in_the_product(rows.dtype) else _matmul_plus_bias
    return product(rows, ops.cast(kernel, kernel.dtype), ops.cast(bias, bias.dtype))


def bias_in_the_product(dtype) -> bool:
    """Whether `project_rows` multiplies the bias in (`_matmul_with_bias_row`): bf16 on TensorFlow on a
    CPU with AMX, where it was measured faster. In float32 there both forms take the same time; CPUs
    without AMX keep the fused form they were measured with (this one was not); XLA fuses on its own."""
    return (
        keras.backend.standardize_dtype(dtype) == "bfloat16"
        and keras.backend.backend() == "tensorflow"
        and "amx_bf16" in cpu_flags()
    )


def _gradients(rows, kernel, upstream) -> tuple:
    """The rows', kernel's and bias' gradients of `rows @ kernel + bias`, each as one matmul (the bias'
    sum as a row of ones times `upstream`: see `_matmul_plus_bias`)."""
    ones = ops.ones((1, ops.shape(upstream)[0]), upstream.dtype)
    return (
        ops.matmul(upstream, ops.transpose(kernel)),
        ops.matmul(ops.transpose(rows), upstream),
        ops.matmul(ones, upstream)[0],
    )


@ops.custom_gradient
def _matmul_plus_bias(rows, kernel, bias):
    """`rows @ kernel + bias` with its gradient written out as three matmuls.

    TensorFlow differentiates the bias add (`ops.add` of a 1-D bias is `tf.nn.bias_add` there) with
    `BiasAddGrad`, a column sum over the (N, d_out) upstream gradient that in bf16 accumulates in bf16:
    600 rows of ~1.0 sum to 512 (tests/test_kernel_dense.py), and tx-bench's model under mixed_bfloat16
    got bias gradients 7.4 % off the float32 ones (median; up to 58 %) where its other gradients were
    4.1 % off. The same sum as a matmul (a row of ones times the gradient) accumulates in float32: 4.3 %
    (up to 6.9 %). Same speed within noise (docs/decisions/bias-gradient-bf16.md).
    """

    def backward(*args, upstream=None):
        return _gradients(rows, kernel, args[0] if upstream is None else upstream)

    return ops.add(ops.matmul(rows, kernel), bias), backward


@ops.custom_gradient
def _matmul_with_bias_row(rows, kernel, bias):
    """`rows @ kernel + bias` as one plain matmul of `[rows | 1 0 .. 0]` by `[kernel; bias; 0 .. 0]`.

    On a CPU with AMX, TensorFlow's oneDNN runs a MatMul fused with the bias add after it as an inner
    product that leaves AMX unused: bf16 at ~320 GFLOP/s on the 2-core AMX Xeon, where a plain MatMul
    runs on AMX at ~740 (docs/decisions/bias-kernel-row-amx.md).
    The bias as one more row of the kernel keeps the MatMul plain, for 32 / d_in more work; the
    gradients are `_matmul_plus_bias`' own.
    """

    def backward(*args, upstream=None):
        return _gradients(rows, kernel, args[0] if upstream is None else upstream)

    count = ops.shape(rows)[0]
    ones = ops.pad(ops.ones((count, 1), rows.dtype), [[0, 0], [0, BIAS_COLUMNS - 1]])
    zeros = ops.zeros((BIAS_COLUMNS - 1, ops.shape(kernel)[1]), kernel.dtype)
    product = ops.matmul(
        ops.concatenate([rows, ones], axis=1), ops.concatenate([kernel, bias[None, :], zeros], axis=0)
    )
    return product, backward
