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


def resolve_precision(precision: str) -> str:
    """`auto`: mixed_float16 on a GPU, mixed_bfloat16 on a CPU that has bf16 instructions, else float32."""
    if precision != "auto":
        return precision
    if has_gpu():
        return "mixed_float16"
    return "mixed_bfloat16" if cpu_has_bfloat16() else "float32"


@contextmanager
def precision_policy(precision: str) -> Iterator[str]:
    """Models built inside compute in `precision` (resolved); the previous global policy comes back after,
    so the next job in the same process starts from it."""
    previous = keras.mixed_precision.global_policy()
    resolved = resolve_precision(precision)
    keras.mixed_precision.set_global_policy(resolved)
    try:
        yield resolved
    finally:
        keras.mixed_precision.set_global_policy(previous)
