"""Training throughput of several models measured in interleaved windows, so load drift hits all alike."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from tx_keras.benchmark.adaptive_windows import timed_windows
from tx_keras.benchmark.compared_pairs import compared_pairs
from tx_keras.benchmark.ratio_interval import geometric_mean, ratio_interval
from tx_keras.benchmark.settings import BenchSize, Timing

if TYPE_CHECKING:  # no Keras at run time: the parent of tx-bench's backend workers imports this
    import keras


def synthetic_batch(size: BenchSize, seed: int = 0) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Random ids with a random amount of trailing padding per row (half to full length), as sentences
    padded to a batch's longest have. Numpy arrays: the same batch feeds every backend."""
    rng = np.random.default_rng(seed)

    def ids() -> np.ndarray:
        rows = rng.integers(4, size.vocab, (size.batch, size.length), dtype=np.int32)
        lengths = rng.integers(size.length // 2, size.length + 1, size.batch)
        rows[np.arange(size.length)[None, :] >= lengths[:, None]] = 0
        return rows

    source, target = ids(), ids()
    labels = np.concatenate([target[:, 1:], np.zeros((size.batch, 1), np.int32)], axis=1)
    return (source, target), labels


def real_tokens(source, labels) -> int:
    """Tokens that are work done: source words plus target positions that have a label (not padding)."""
    return int(np.count_nonzero(source)) + int(np.count_nonzero(labels))


def padding_share(source, labels) -> float:
    """The share of the positions a step computes (source and decoder positions) that are padding."""
    positions = np.size(source) + np.size(labels)
    return 1.0 - real_tokens(source, labels) / positions if positions else 0.0


def interleaved_step_times(
    models: dict[str, keras.Model], inputs, labels, timing: Timing
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict]:
    """Wall seconds and CPU seconds (user + kernel, all threads) per training step of each model, one
    figure per window, and how the windows stopped (adaptive_windows.py).

    Every model first runs `timing.warmup` untimed steps (tracing, allocation). Then each window times
    `timing.steps` steps of every model in turn, the order reversed every other window (A B C, C B A, A B
    C, ...), so a load change on the shared machine lands on every model instead of on whichever ran
    last; windows continue until the ratios of ours to each other model are known within the target.
    """
    for model in models.values():
        for _ in range(timing.warmup):
            model.train_on_batch(inputs, labels)
    pairs = compared_pairs(models)
    return timed_windows(
        lambda window: window_step_times(models, inputs, labels, timing.steps, reverse=window % 2 == 1),
        pairs,
        timing,
        timing.steps,
    )


def window_step_times(
    models: dict[str, keras.Model], inputs, labels, steps: int, reverse: bool = False
) -> dict[str, tuple[float, float]]:
    """One window: `steps` steps of every model in turn (in reverse order if `reverse`), as (wall, CPU)
    seconds per step. Also the unit a parent process interleaves across backends (backend_race.py)."""
    names = list(models)
    times = {}
    for name in names[::-1] if reverse else names:
        # process_time: user + kernel time of every thread at nanosecond resolution (os.times ticks at
        # 10 ms, which a quick window's few milliseconds can round to zero, and a log ratio cannot take)
        started, cpu_started = time.perf_counter(), time.process_time()
        for _ in range(steps):
            models[name].train_on_batch(inputs, labels)
        cpu_ended = time.process_time()
        times[name] = (
            (time.perf_counter() - started) / steps,
            (cpu_ended - cpu_started) / steps,
        )
    return {name: times[name] for name in names}


def spread(values: list[float]) -> float:
    """(max - min) / geometric mean: how far apart the windows of one row were."""
    return (max(values) - min(values)) / geometric_mean(values)


def paired_ratio(
    reference: tuple[list[float], list[float]], other: tuple[list[float], list[float]]
) -> dict[str, dict[str, float]]:
    """How many times faster `reference` ran than `other`, by wall and by CPU time: their (wall, CPU)
    seconds per step paired by window, so both met the same load, each with its 95 % interval."""
    return {
        "wall": ratio_interval(reference[0], other[0]),
        "cpu": ratio_interval(reference[1], other[1]),
    }
