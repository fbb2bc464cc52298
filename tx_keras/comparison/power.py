"""The power of Welch's test and of its equivalence form (TOST) for the n actually run, simulated.

Simulated through scipy's own test on arrays (`ttest_ind(..., equal_var=False)`, one row per simulated
experiment, seeded), because Welch's degrees of freedom vary with the sample: the pooled-t formula
(statsmodels' `TTestIndPower`) overstates its power at small n. Normal noise, equal spreads on both sides;
effects and margins are in units of that common sd.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from scipy import stats

DRAWS = 20_000  # simulated experiments per figure: a power of 0.5 to about ± 0.004 (one sd)
SEED = 0
TARGET = 0.8  # the power a test should have before its verdict can be expected
MAX_SEEDS = 200  # the largest n a side `seeds_for` searches


def _samples(effect: float, n: int, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((draws, n)) + effect, rng.standard_normal((draws, n))


@functools.lru_cache(maxsize=512)
def welch_power(effect: float, n: int, alpha: float, draws: int = DRAWS, seed: int = SEED) -> float:
    """The share of simulated experiments (n a side, true difference `effect` sd) in which Welch's test,
    one-sided in the claimed direction, finds the difference at `alpha`."""
    first, second = _samples(effect, n, draws, seed)
    p = stats.ttest_ind(first, second, axis=1, equal_var=False, alternative="greater").pvalue
    return float(np.mean(p < alpha))


def tost_p(first: np.ndarray, second: np.ndarray, margin: float) -> np.ndarray:
    """TOST p per row: the larger of the two one-sided Welch p's against -margin and +margin (the same as
    statsmodels' `ttost_ind(usevar="unequal")`, which takes one experiment at a time)."""
    lower = stats.ttest_ind(first + margin, second, axis=-1, equal_var=False, alternative="greater")
    upper = stats.ttest_ind(first - margin, second, axis=-1, equal_var=False, alternative="less")
    return np.maximum(lower.pvalue, upper.pvalue)


@functools.lru_cache(maxsize=512)
def tost_power(
    margin: float, n: int, alpha: float, effect: float = 0.0, draws: int = DRAWS, seed: int = SEED
) -> float:
    """The share of simulated experiments (n a side, true difference `effect` sd, 0 by default: the most
    favourable case) in which TOST shows the difference within ± `margin` sd at `alpha`."""
    first, second = _samples(effect, n, draws, seed)
    return float(np.mean(tost_p(first, second, margin) < alpha))


def seeds_for(power_at: Callable[[int], float], target: float = TARGET) -> int | None:
    """The fewest seeds a side (from 2) at which `power_at(n)` reaches `target`, or None up to MAX_SEEDS.
    No library solves n for a simulated power; power rises with n, so doubling, then halving, finds it."""
    high = 2
    while power_at(high) < target:
        if high >= MAX_SEEDS:
            return None
        high = min(2 * high, MAX_SEEDS)
    low = max(2, high // 2)
    while low < high:  # the smallest enough n in [low, high]
        middle = (low + high) // 2
        if power_at(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return high
