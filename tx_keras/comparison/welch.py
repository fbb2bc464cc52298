"""Welch's t-test from each side's mean, sd and n: the one test behind every comparison of runs.

From summaries rather than raw values so that a published table (mean ± sd, n) can be re-judged, and so that
an sd below the metric's resolution can be taken as that resolution: seeds that agree exactly (sd 0, e.g.
equal epoch counts) say only that the noise is below what the metric resolves, not that it is zero. The
same numbers as statsmodels' `CompareMeans.ttest_ind(usevar="unequal")` and `ttost_ind` on the raw values
(tests/test_welch.py checks both).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Welch:
    """Side 1 minus side 2: the difference of means, its standard error, Welch's degrees of freedom and
    Hedges' g (the difference in pooled-sd units, small-sample corrected)."""

    difference: float
    se: float
    df: float
    hedges_g: float

    @property
    def t(self) -> float:
        return self.difference / self.se

    @property
    def p_two_sided(self) -> float:
        return float(2 * stats.t.sf(abs(self.t), self.df))

    @property
    def p_greater(self) -> float:
        """One-sided p of "side 1 is larger" (H0: difference <= 0)."""
        return float(stats.t.sf(self.t, self.df))

    def p_equivalent(self, margin: float) -> float:
        """TOST (two one-sided tests): p of "the difference lies within ± margin"; below alpha, the
        difference is shown to be smaller than the margin."""
        lower = stats.t.sf((self.difference + margin) / self.se, self.df)
        upper = stats.t.cdf((self.difference - margin) / self.se, self.df)
        return float(max(lower, upper))

    def least_significant(self, alpha: float, one_sided: bool = True) -> float:
        """The smallest difference these spreads and seeds would have called real at `alpha`."""
        level = alpha if one_sided else alpha / 2
        return float(stats.t.ppf(1 - level, self.df)) * self.se


def welch(
    mean_1: float, sd_1: float, n_1: int, mean_2: float, sd_2: float, n_2: int, resolution: float = 0.0
) -> Welch:
    """Compare side 1 with side 2 (n >= 2 each); an sd below `resolution` is taken as `resolution`."""
    if min(n_1, n_2) < 2:
        raise ValueError(f"Welch's test needs >= 2 runs a side, got {n_1} and {n_2}")
    sd_1, sd_2 = max(sd_1, resolution), max(sd_2, resolution)
    v_1, v_2 = sd_1**2 / n_1, sd_2**2 / n_2
    se = math.sqrt(v_1 + v_2)
    if se == 0.0:
        raise ValueError("both sides have sd 0: give the metric's resolution")
    df = (v_1 + v_2) ** 2 / (v_1**2 / (n_1 - 1) + v_2**2 / (n_2 - 1))
    pooled = math.sqrt(((n_1 - 1) * sd_1**2 + (n_2 - 1) * sd_2**2) / (n_1 + n_2 - 2))
    correction = 1 - 3 / (4 * (n_1 + n_2) - 9)
    difference = mean_1 - mean_2
    return Welch(difference, se, df, difference / pooled * correction)


def welch_power(
    effect: float,
    n: int,
    alpha: float,
    one_sided: bool = True,
    draws: int = 100_000,
    seed: int = 0,
) -> float:
    """The share of `draws` simulated experiments (n normal values a side, equal spreads, true difference
    `effect` sd) in which Welch's test finds the difference at `alpha`. Simulated, because Welch's
    degrees of freedom vary with the sample: the pooled-t formula overstates its power at small n."""
    rng = np.random.default_rng(seed)
    first = rng.standard_normal((draws, n)) + effect
    second = rng.standard_normal((draws, n))
    v_1, v_2 = first.var(axis=1, ddof=1) / n, second.var(axis=1, ddof=1) / n
    t = (first.mean(axis=1) - second.mean(axis=1)) / np.sqrt(v_1 + v_2)
    df = (v_1 + v_2) ** 2 / ((v_1**2 + v_2**2) / (n - 1))
    p = stats.t.sf(t, df) if one_sided else 2 * stats.t.sf(np.abs(t), df)
    return float(np.mean(p < alpha))


@functools.lru_cache(maxsize=32)
def detectable_effect(
    n: int, alpha: float, power: float, one_sided: bool = True, draws: int = 20_000, seed: int = 0
) -> float:
    """The effect (difference / common sd) that Welch's test at `alpha` finds with `power`, n runs a
    side: bisection on `welch_power` with the same simulated noise at every effect (so power rises
    monotonically with the effect and the answer is reproducible)."""
    low, high = 0.0, 10.0
    for _ in range(16):  # to 10 / 2**16 sd, far below the simulation's own error (~0.01 sd)
        middle = (low + high) / 2
        if welch_power(middle, n, alpha, one_sided, draws, seed) < power:
            low = middle
        else:
            high = middle
    return (low + high) / 2
