"""The CPU's instruction-set flags, read once: which kernels TensorFlow's oneDNN picks depends on them."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The first core's flags in /proc/cpuinfo (`avx512_bf16`, `amx_bf16`, ...); empty where none."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()
