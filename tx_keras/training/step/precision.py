"""Mixed precision per run: the Keras dtype policy is global, and sweep jobs share one process."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keras

from tx_keras.runtime.accelerators import gpu_names
from tx_keras.runtime.cpu_flags import cpu_flags


def cpu_has_bfloat16() -> bool:
    """AVX-512 BF16 or AMX: the CPU multiplies bfloat16 natively, so mixed_bfloat16 is faster, not slower."""
    return bool({"avx512_bf16", "amx_bf16"} & cpu_flags())


def has_gpu() -> bool:
    """Whether the backend Keras runs on sees a GPU (each backend has its own device list)."""
    return bool(gpu_names())


def resolve_precision(precision: str, compiled: bool = False) -> str:
    """`auto`: mixed_float16 on a GPU; on a CPU mixed_bfloat16 where it has bf16 instructions and the step
    is TensorFlow's graph (oneDNN's bf16 kernels), float32 otherwise. A `compiled` step (XLA: JAX, or
    jit_compile=true) stays float32 on a CPU: XLA's CPU matmuls do not use the bf16 instructions, and its
    bf16 step ran slower than its float32 one (docs/decisions/precision-auto-xla.md)."""
    if precision != "auto":
        return precision
    if has_gpu():
        return "mixed_float16"
    return "mixed_bfloat16" if cpu_has_bfloat16() and not compiled else "float32"


@contextmanager
def precision_policy(precision: str, compiled: bool = False) -> Iterator[str]:
    """Models built inside compute in `precision` (resolved for a `compiled` step or not); the previous
    global policy comes back after, so the next job in the same process starts from it."""
    previous = keras.mixed_precision.global_policy()
    resolved = resolve_precision(precision, compiled)
    keras.mixed_precision.set_global_policy(resolved)
    try:
        yield resolved
    finally:
        keras.mixed_precision.set_global_policy(previous)
