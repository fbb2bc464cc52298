"""Training throughput: tokens per second, the median of several timed windows after a warm-up."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf

from tx_keras.benchmark.size import BenchSize
from tx_keras.training.masked_loss import MaskedCrossEntropy
from tx_keras.training.precision import precision_policy


def synthetic_batch(size: BenchSize, seed: int = 0) -> tuple[tuple[tf.Tensor, tf.Tensor], tf.Tensor]:
    """Random ids with a random amount of trailing padding per row, as real sentences have."""
    rng = np.random.default_rng(seed)

    def ids() -> np.ndarray:
        rows = rng.integers(4, size.vocab, (size.batch, size.length), dtype=np.int32)
        lengths = rng.integers(size.length // 2, size.length + 1, size.batch)
        rows[np.arange(size.length)[None, :] >= lengths[:, None]] = 0
        return rows

    source, target = ids(), ids()
    labels = np.concatenate([target[:, 1:], np.zeros((size.batch, 1), np.int32)], axis=1)
    return (tf.constant(source), tf.constant(target)), tf.constant(labels)


def training_throughput(
    build: Callable[[], keras.Model],
    size: BenchSize,
    jit_compile: bool = False,
    precision: str = "float32",
    windows: int = 5,
    steps: int = 10,
    warmup: int = 3,
) -> float:
    """Median tokens/s of `windows` windows of `steps` Adam steps (same loss for every model).

    The model is built under `precision`; `warmup` steps first absorb tracing and allocation.
    """
    keras.backend.clear_session()
    with precision_policy(precision):
        model = build()
        model.compile(
            optimizer=keras.optimizers.Adam(1e-4), loss=MaskedCrossEntropy(), jit_compile=jit_compile
        )
        inputs, labels = synthetic_batch(size)
        for _ in range(warmup):
            model.train_on_batch(inputs, labels)
        rates = []
        for _ in range(windows):
            started = time.perf_counter()
            for _ in range(steps):
                model.train_on_batch(inputs, labels)
            rates.append(steps * size.tokens_per_step / (time.perf_counter() - started))
    return statistics.median(rates)
