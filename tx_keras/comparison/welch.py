"""Welch's t-test of two sets of runs, and its equivalence form (TOST): the one test behind every comparison.

Every number comes from scipy (`ttest_ind(..., equal_var=False)`, its `confidence_interval`) and statsmodels
(`ttost_ind`, `effectsize_smd`) on the runs' values. A published table (mean ± sd, n) is re-judged through
`values_of`, n values with exactly that mean and sample sd: Welch's test reads nothing else of a sample.
An sd below the metric's resolution is raised to it (`at_resolution`): seeds that agree exactly (sd 0, e.g.
equal epoch counts) say only that the noise is below what the metric resolves, not that it is zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.meta_analysis import effectsize_smd
from statsmodels.stats.weightstats import ttost_ind

LEVEL = 0.95  # coverage of every interval of a difference


def values_of(mean: float, sd: float, n: int) -> np.ndarray:
    """n values with exactly this mean and sample sd (n >= 2): how a published mean ± sd is re-tested."""
    if n < 2:
        raise ValueError(f"a spread needs >= 2 values, got {n}")
    ranks = np.arange(n, dtype=float) - (n - 1) / 2
    return mean + sd * ranks / np.std(ranks, ddof=1)


def at_resolution(values: Sequence[float], resolution: float) -> np.ndarray:
    """The values, their spread about the same mean raised to `resolution` when it is smaller."""
    values = np.asarray(values, dtype=float)
    sd = float(np.std(values, ddof=1))
    return values if sd >= resolution else values_of(float(np.mean(values)), resolution, len(values))


@dataclass(frozen=True)
class Welch:
    """Side 1 minus side 2: the difference of means with its 95 % interval, Welch's t, degrees of freedom
    and p-values, Hedges' g (the difference in pooled-sd units, small-sample corrected), and the values
    (at the metric's resolution) they came from, for the TOST and the power of this pair."""

    difference: float
    low: float
    high: float
    t: float
    df: float
    p_two_sided: float
    p_greater: float
    hedges_g: float
    first: tuple[float, ...]
    second: tuple[float, ...]

    @property
    def sd(self) -> float:
        """The pooled sample sd of the two sides: the unit of the power figures."""
        n_1, n_2 = len(self.first), len(self.second)
        v_1, v_2 = np.var(self.first, ddof=1), np.var(self.second, ddof=1)
        return float(np.sqrt(((n_1 - 1) * v_1 + (n_2 - 1) * v_2) / (n_1 + n_2 - 2)))

    def p_equivalent(self, margin: float) -> float:
        """TOST (statsmodels' `ttost_ind`, unequal variances): p of "the difference lies within ± margin";
        below alpha, the difference is shown to be smaller than the margin."""
        p, _, _ = ttost_ind(np.array(self.first), np.array(self.second), -margin, margin, usevar="unequal")
        return float(p)

    def interval_text(self, digits: int = 4) -> str:
        return f"{self.difference:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"


def welch(
    first: Sequence[float], second: Sequence[float], resolution: float = 0.0, level: float = LEVEL
) -> Welch:
    """Compare the runs of side 1 with those of side 2 (>= 2 each) by Welch's t-test; `level` is the
    coverage of the difference's interval (raise it for simultaneous intervals over several pairs)."""
    if min(len(first), len(second)) < 2:
        raise ValueError(f"Welch's test needs >= 2 runs a side, got {len(first)} and {len(second)}")
    a, b = at_resolution(first, resolution), at_resolution(second, resolution)
    if np.std(a, ddof=1) == 0.0 and np.std(b, ddof=1) == 0.0:
        raise ValueError("both sides have sd 0: give the metric's resolution")
    two = stats.ttest_ind(a, b, equal_var=False)
    interval = two.confidence_interval(level)
    g, _ = effectsize_smd(a.mean(), a.std(ddof=1), len(a), b.mean(), b.std(ddof=1), len(b))
    return Welch(
        difference=float(a.mean() - b.mean()),
        low=float(interval.low),
        high=float(interval.high),
        t=float(two.statistic),
        df=float(two.df),
        p_two_sided=float(two.pvalue),
        p_greater=float(stats.t.sf(two.statistic, two.df)),  # one-sided, from the same test
        hedges_g=float(g),
        first=tuple(map(float, a)),
        second=tuple(map(float, b)),
    )
