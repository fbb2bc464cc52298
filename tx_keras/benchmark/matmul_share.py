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

import keras
from keras import ops

from tx_keras.benchmark.matmul_peak import compiled
from tx_keras.benchmark.settings import BenchSize


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
    product y = x w and its gradients dx = dy w^T, dw = x^T dy, with the shapes a training step has,
    compiled on the running Keras backend. The operands are arguments, not constants the compiler could
    fold."""
    seed = keras.random.SeedGenerator(0)
    tensors: dict[tuple[int, ...], object] = {}

    def operand(shape: tuple[int, ...]):
        if shape not in tensors:
            tensors[shape] = ops.cast(keras.random.normal(shape, stddev=0.1, seed=seed), dtype)
        return tensors[shape]

    products = forward_products(size)
    operands = [
        (operand((*batch, m, k)), operand((*batch, k, n)), operand((*batch, m, n)))
        for batch, m, k, n in products
    ]

    @compiled
    def step(operands):
        total = ops.zeros((), "float32")
        for x, w, dy in operands:
            for product in (
                ops.matmul(x, w),
                ops.matmul(dy, ops.swapaxes(w, -1, -2)),
                ops.matmul(ops.swapaxes(x, -1, -2), dy),
            ):
                total = total + ops.sum(ops.cast(product[..., :1, :1], "float32"))  # keeps it live
        return total

    ops.convert_to_numpy(step(operands))  # trace and warm up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        ops.convert_to_numpy(step(operands))
        best = min(best, time.perf_counter() - started)
    return best
