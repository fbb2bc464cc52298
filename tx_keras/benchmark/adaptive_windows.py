"""Timed windows until the ratios are known well enough: the stop rule of tx-bench's training rows.

A fixed number of windows gives a ratio whose uncertainty depends on the day's load: 7 windows on a quiet
machine pin a 1.1x down, on a shared one they do not. So tx-bench keeps timing windows until the 95 %
interval of every ratio it prints (ratio_interval.py) is narrower than a target, or a time cap is reached,
and says which of the two stopped it and how many windows it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence

from tx_keras.benchmark.machine_load import busy_cpu_seconds, others_cores, primary_measure
from tx_keras.benchmark.ratio_interval import log_half_width, log_ratios
from tx_keras.benchmark.settings import Timing

# One window: {row key: (wall seconds per step, CPU seconds per step)}; its argument is the window index.
Window = Callable[[int], dict[Hashable, tuple[float, float]]]


def should_stop(windows: int, widest: float, elapsed_s: float, timing: Timing) -> str | None:
    """Why to stop after `windows` windows whose widest interval has log half-width `widest`, or None.

    Never before `timing.windows`, and only after an even number of windows: the order of the models
    reverses every window, so an even count puts each model first as often as last. Then: `narrow` once
    `widest` <= `timing.target_half_width`, `time cap` once `elapsed_s` >= `timing.time_cap_s`."""
    if windows < timing.windows or windows % 2:
        return None
    if widest <= timing.target_half_width:
        return "narrow"
    if elapsed_s >= timing.time_cap_s:
        return "time cap"
    return None


def timed_windows(
    one_window: Window, pairs: Sequence[tuple[Hashable, Hashable]], timing: Timing, steps: int
) -> tuple[dict, dict, dict]:
    """Windows of `one_window` until should_stop says so; `pairs` are the (ours, theirs) row keys whose
    ratios must be narrow, judged by the primary measure (CPU time when others loaded the machine, see
    machine_load.py). Returns wall and CPU seconds per step by key, one per window, and how it stopped:
    windows, seconds, reason, the cores others kept busy and the primary measure."""
    wall: dict = {}
    cpu: dict = {}
    started, busy_before, own_cpu = time.perf_counter(), busy_cpu_seconds(), 0.0
    window = 0
    while True:
        for key, (seconds, cpu_seconds) in one_window(window).items():
            wall.setdefault(key, []).append(seconds)
            cpu.setdefault(key, []).append(cpu_seconds)
            own_cpu += cpu_seconds * steps
        window += 1
        elapsed = time.perf_counter() - started
        cores = others_cores(busy_before, busy_cpu_seconds(), own_cpu, elapsed)
        primary = primary_measure(cores)
        series = cpu if primary == "cpu" else wall
        widest = (
            max(
                (log_half_width(log_ratios(series[ours], series[theirs])) for ours, theirs in pairs),
                default=0.0,
            )
            if window >= 2
            else float("inf")
        )
        if reason := should_stop(window, widest, elapsed, timing):
            stop = {
                "windows": window,
                "seconds": elapsed,
                "reason": reason,
                "others_cores": cores,
                "primary": primary,
            }
            return wall, cpu, stop
