"""The matrix products of one training step, run alone: how much of a step the FLOPs count actually costs.

MFU compares a step with the machine's best matmul rate. When it is low, the question is whether the
matmuls run slowly or the rest of the step (softmax, norms, masks, transposes, the loss, the optimizer,
the executor dispatching thousands of small ops) takes the time. Running exactly the step's products
(same shapes, same dtype, forward and both backward products of each) and nothing else answers it: their
time over the step's time is the share of the step that is counted work.
"""

from __future__ import annotations

import math
import time

import tensorflow as tf

from tx_keras.benchmark.size import BenchSize


def forward_products(size: BenchSize) -> list[tuple[tuple[int, ...], int, int, int]]:
    """(batch dims, m, k, n) of every product of one forward pass of the encoder-decoder at `size`:
    q/k/v, output, FFN and vocabulary projections over the batch's b*t rows, and per head the scores
    (q k^T) and weighted sums of attention. Their FLOPs are `flops.forward_flops`. The projections of one
    input are one product (q/k/v, or k/v in cross-attention), as with `model.fused_qkv`: a larger matmul
    runs at least as fast, so the ceiling this sets errs high, never flattering a model's MFU."""
    rows, d, t = size.batch * size.length, size.d_model, size.length
    heads = (size.batch, size.num_heads)
    attention = [(heads, t, d // size.num_heads, t), (heads, t, t, d // size.num_heads)]
    self_attention = [((), rows, d, 3 * d), *attention, ((), rows, d, d)]
    cross_attention = [((), rows, d, d), ((), rows, d, 2 * d), *attention, ((), rows, d, d)]
    ffn = [((), rows, d, size.dff), ((), rows, size.dff, d)]
    encoder = (self_attention + ffn) * size.encoder_layers
    decoder = (self_attention + cross_attention + ffn) * size.decoder_layers
    return encoder + decoder + [((), rows, d, size.vocab)]


def products_flops(products: list[tuple[tuple[int, ...], int, int, int]]) -> int:
    """FLOPs of a training step's products: each forward product m x k x n plus its two gradients."""
    return sum(3 * 2 * math.prod(batch) * m * k * n for batch, m, k, n in products)


def matmul_only_seconds(size: BenchSize, dtype: str = "float32", repeats: int = 5) -> float:
    """Best wall seconds of a compiled graph holding only the step's products in `dtype`: each forward
    product y = x w and its gradients dx = dy w^T, dw = x^T dy, with the shapes a training step has."""
    tensors: dict[tuple[int, ...], tf.Tensor] = {}

    def operand(shape: tuple[int, ...]) -> tf.Tensor:
        if shape not in tensors:
            tensors[shape] = tf.cast(tf.random.normal(shape, stddev=0.1), dtype)
        return tensors[shape]

    @tf.function
    def step():
        sums = []
        for batch, m, k, n in forward_products(size):
            x, w, dy = operand((*batch, m, k)), operand((*batch, k, n)), operand((*batch, m, n))
            for product in (
                tf.matmul(x, w),
                tf.matmul(dy, w, transpose_b=True),
                tf.matmul(x, dy, transpose_a=True),
            ):
                sums.append(tf.reduce_sum(tf.cast(product[..., :1, :1], tf.float32)))  # keeps it live
        return tf.add_n(sums)

    step().numpy()  # trace and warm up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        step().numpy()
        best = min(best, time.perf_counter() - started)
    return best
