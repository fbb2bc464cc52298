"""tx-bench's decoding calls timed in turns, in one process or in two side by side (decoding_process.py),
and the rates and ratios made of those times.

A turn times every call key once in every process, the keys and the processes in reversed order every
other turn, so a load change hits both decoders and both processes; the unit of evidence is a turn.
"""

from __future__ import annotations

import statistics
from typing import Protocol

from tx_keras.benchmark.ratio_interval import geometric_mean, ratio_interval

Seconds = dict[str, dict[str, list[float]]]  # process -> call key -> one call's seconds per turn


class CallTimer(Protocol):
    """A process that times one call of a key and says how long it took."""

    calls: list[str]

    def time(self, key: str) -> tuple[float, float]:
        """(wall seconds, the process's CPU seconds) of one call of `key`."""


def timed_turns(timers: dict[str, CallTimer], turns: int) -> tuple[Seconds, Seconds]:
    """(wall, cpu) seconds of every timer's calls over `turns` turns."""
    wall: Seconds = {name: {key: [] for key in timer.calls} for name, timer in timers.items()}
    cpu: Seconds = {name: {key: [] for key in timer.calls} for name, timer in timers.items()}
    keys, names = list(next(iter(timers.values())).calls), list(timers)
    for turn in range(turns):
        for key in keys if turn % 2 == 0 else reversed(keys):
            for name in names if turn % 2 == 0 else reversed(names):
                seconds, cpu_seconds = timers[name].time(key)
                wall[name][key].append(seconds)
                cpu[name][key].append(cpu_seconds)
    return wall, cpu


def decoding_rates(wall: dict[str, list[float]], cpu: dict[str, list[float]], batch: int) -> dict:
    """tx-bench's decoding rows from the seconds of each call key's timed calls, one per turn (a turn
    times every key once, the order reversed every other turn so a load change hits both decoders):
    for each N, `{"prefix": tokens/s, "cached": tokens/s}` over the median call, `speedup` the median of
    the per-turn ratios prefix / cached and `cpu_speedup` the same in the process's CPU time; `saved_model_N`
    its tokens/s. On a shared machine a wall-time turn also holds the time the decoder waited for a core (a
    cached call, made of many small ops that hop between TensorFlow's threads, waits more often than a prefix
    call), which the CPU time leaves out. With two turns or more, `interval` and `cpu_interval` give the
    ratio as the geometric mean over the turns with its 95 % interval (ratio_interval.py, as for the
    training rows): a median of three turns says nothing about where the next run may land."""
    results: dict = {}
    for key, seconds in wall.items():
        name, count = key.rsplit("_", 1)
        tokens = batch * int(count)
        if name == "saved_model":
            results[key] = tokens / statistics.median(seconds)
        elif name == "cached":
            prefix, cached = wall[f"prefix_{count}"], seconds
            cpu_prefix, cpu_cached = cpu[f"prefix_{count}"], cpu[key]
            rates = {
                "prefix": tokens / statistics.median(prefix),
                "cached": tokens / statistics.median(cached),
            }
            rates |= {
                "speedup": _median_ratio(prefix, cached),
                "cpu_speedup": _median_ratio(cpu_prefix, cpu_cached),
            }
            if len(seconds) >= 2:
                rates["interval"] = ratio_interval(cached, prefix)
                rates["cpu_interval"] = ratio_interval(cpu_cached, cpu_prefix)
            results[count] = rates
    return results  # the lengths in the calls' order, then the SavedModel


def _median_ratio(prefix: list[float], cached: list[float]) -> float:
    """The median over turns of prefix time / cached time."""
    return statistics.median(slow / max(fast, 1e-9) for slow, fast in zip(prefix, cached, strict=True))


def pools_gain(
    planned: dict[str, list[float]], default: dict[str, list[float]]
) -> dict[str, dict[str, float]]:
    """For each call key, how many times faster it ran in the process on the planned thread pools than in
    the one on TensorFlow's defaults, paired by turn: `ratio` the geometric mean of the per-turn ratios,
    with two turns or more its 95 % interval (`low`, `high`, `half_width`)."""
    gains = {}
    for key, seconds in planned.items():
        if len(seconds) >= 2:
            gains[key] = ratio_interval(seconds, default[key])
        else:
            gains[key] = {"ratio": geometric_mean(default[key]) / geometric_mean(seconds)}
    return gains
