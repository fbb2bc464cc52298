"""One compiled program on whichever Keras backend this process runs: the benchmark's matmul-only graphs
are written once in `keras.ops` and compiled the way that backend compiles a training step."""

from __future__ import annotations

from collections.abc import Callable

import keras


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
