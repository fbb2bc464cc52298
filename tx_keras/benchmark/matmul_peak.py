"""This machine's dense matmul peak per dtype, on the running Keras backend: the ceiling MFU is a share of.
Its graphs, and matmul_share.py's, are written once in `keras.ops` and compiled the way the backend compiles
a training step (`compiled`)."""

from __future__ import annotations

import time
from collections.abc import Callable

import keras
from keras import ops


def compiled(function: Callable) -> Callable:
    """`function` as one graph: `tf.function` on TensorFlow, `jax.jit` on JAX (imported only there, so a
    machine with JAX and no TensorFlow can run it)."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return jax.jit(function)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function(function)
    raise ValueError(f"tx-bench compiles on tensorflow or jax, not on Keras backend {backend!r}")


def matmul_peak(dtype: str = "float32", n: int = 2048, repeats: int = 5) -> float:
    """Best FLOP/s of (n x n) @ (n x n) matmuls whose inputs are `dtype` (a bfloat16 peak needs bfloat16
    operands, not float32 ones cast inside), in a compiled graph: the ceiling a model can reach.

    Measured two ways and the better one counts: one chain of dependent products (each matmul uses every
    core) and two independent chains (TensorFlow also runs independent ops side by side, as it does a
    model's step; on the 2-core AVX2 EPYC that was 5-10 % faster). A ceiling set too low would flatter
    every MFU. Compiled on the running Keras backend (`tf.function` or `jax.jit`)."""
    seed = keras.random.SeedGenerator(0)
    a = ops.cast(keras.random.normal((n, n), seed=seed), dtype)
    b = ops.cast(keras.random.normal((n, n), seed=seed), dtype)
    scale = ops.cast(1e-3, dtype)  # keeps values finite; O(n^2) next to O(n^3)

    @compiled
    def one_chain(x):
        for _ in range(4):
            x = ops.matmul(x, a) * scale
        return x

    @compiled
    def two_chains(x):
        y = x
        for _ in range(4):
            x, y = ops.matmul(x, a) * scale, ops.matmul(y, b) * scale
        return x + y

    best = 0.0
    for chain, products in ((one_chain, 4), (two_chains, 8)):
        ops.convert_to_numpy(chain(a))  # trace and warm up
        for _ in range(repeats):
            started = time.perf_counter()
            ops.convert_to_numpy(chain(a))  # waits for the result, as .numpy() does
            best = max(best, products * 2 * n**3 / (time.perf_counter() - started))
    return best
