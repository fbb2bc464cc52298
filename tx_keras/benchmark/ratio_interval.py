"""How many times faster one model ran than another, with a 95 % interval, from windows timed in pairs.

Both models run in every window (interleaved, tx-bench's throughput.py), so the load of that window hits
both: the unit of evidence is the per-window log ratio log(theirs / ours), one number per window. Timing
noise is multiplicative (a busy core stretches every step by a factor), so logs make it additive and
symmetric; the ratio is exp of their mean, which equals the ratio of the two rows' geometric-mean step
times exactly: a table's ratio is always computed from the rows printed beside it.

The interval is Student's t on those log ratios, not a bootstrap: tx-bench stops at 6-30 windows, and
a percentile bootstrap of so few values is too narrow (it cannot see beyond the extremes it resampled)
and varies from run to run by its random draws; t is exact for normal log ratios, widens honestly when
windows are few, and the same windows always give the same interval (a test checks known data).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.stats import t as student_t

CONFIDENCE = 0.95


def geometric_mean(values: Sequence[float]) -> float:
    """exp(mean(log v)): the row figure whose ratios are the mean of paired log ratios."""
    return math.exp(sum(math.log(value) for value in values) / len(values))


def log_ratios(ours: Sequence[float], theirs: Sequence[float]) -> list[float]:
    """log(theirs / ours) per window: positive when ours took less time per step."""
    return [math.log(b / a) for a, b in zip(ours, theirs, strict=True)]


def log_half_width(logs: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """Half-width of the t-interval of the mean log ratio (two windows at least).

    On the ratio scale the interval is ratio x exp(+-h), so h is (for small h) its relative half-width:
    0.03 means about +-3 %."""
    n = len(logs)
    if n < 2:
        raise ValueError(f"an interval needs two windows at least, not {n}")
    mean = sum(logs) / n
    sd = math.sqrt(sum((value - mean) ** 2 for value in logs) / (n - 1))
    return float(student_t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)


def ratio_interval(ours: Sequence[float], theirs: Sequence[float]) -> dict[str, float]:
    """theirs / ours (seconds per step paired by window: how many times faster ours ran) as `ratio`,
    with its 95 % interval `low`-`high` and the log half-width `half_width`."""
    logs = log_ratios(ours, theirs)
    mean = sum(logs) / len(logs)
    half = log_half_width(logs)
    return {
        "ratio": math.exp(mean),
        "low": math.exp(mean - half),
        "high": math.exp(mean + half),
        "half_width": half,
    }
