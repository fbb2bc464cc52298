"""A projection on the last axis written as one 2-D matmul, so that the CPU kernels fuse the bias into it."""

from __future__ import annotations

import keras
from keras import ops


def project_rows(inputs, kernel, bias=None):
    """(..., d_in) -> (N, d_out): every position's row times `kernel`, plus `bias`.

    Keras' Dense multiplies a 3-D input through `tensordot`, which reshapes the matmul's result back to
    3-D before the bias is added; TensorFlow's oneDNN kernels (on by default on AVX-512 CPUs) fuse a
    MatMul with the bias add and ReLU that follow it into one kernel only when nothing sits between them.
    Flattening the rows first gives them that pattern; the caller reshapes the (N, d_out) result once.
    """
    rows = ops.matmul(ops.reshape(inputs, (-1, ops.shape(kernel)[0])), kernel)
    return rows if bias is None else ops.add(rows, bias)


def dense_on_rows(dense: keras.layers.Dense, inputs):
    """`dense(inputs)` computed on the flattened rows (`project_rows`): same weights, same outputs.

    The layer stays a plain Dense, the holder of its weights, so that saved models and checkpoints keep
    their layout (Keras names a sublayer's weights in a file after its class). Quantized layers keep
    Dense's own call, which dequantizes.
    """
    if dense.quantization_mode is not None:
        return dense(inputs)
    if not dense.built:  # as Dense's own first call would (an unbuilt model decoding, say)
        dense.build(inputs.shape)
    dtype = dense.compute_dtype
    bias = ops.cast(dense.bias, dtype) if dense.use_bias else None
    rows = project_rows(ops.cast(inputs, dtype), ops.cast(dense.kernel, dtype), bias)
    return ops.reshape(dense.activation(rows), (*ops.shape(inputs)[:-1], dense.units))
