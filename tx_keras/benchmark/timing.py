"""How long tx-bench measures, in a leaf module: the parent of its backend workers imports no Keras."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """How long to measure: interleaved training windows x steps after a warm-up; decoding repeats;
    peak matmul n; decoding lengths."""

    windows: int = 7
    steps: int = 10
    warmup: int = 3
    repeats: int = 3
    matmul_size: int = 2048
    outputs: tuple[int, ...] = (32, 64)
