"""How long tx-bench measures, in a leaf module: the parent of its backend workers imports no Keras."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """How long to measure: at least `windows` interleaved training windows of `steps` steps after a
    warm-up, then more until every ratio's 95 % interval is within +-`target_half_width` (log scale) or a
    block has run `time_cap_s` seconds of windows; decoding repeats; peak matmul n; decoding lengths."""

    windows: int = 8
    steps: int = 10
    warmup: int = 3
    repeats: int = 9
    matmul_size: int = 2048
    outputs: tuple[int, ...] = (32, 64)
    target_half_width: float = 0.03
    time_cap_s: float = 240.0
