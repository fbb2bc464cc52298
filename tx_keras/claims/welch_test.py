"""Is a difference between two settings real? Welch's t-test over seeds, with the effect size beside it.

Replaces "the difference exceeds 2 pooled sd", which with 3 seeds a side is a test at about p 0.07 and
calls any difference real when both settings have sd 0. Welch's test does not assume equal spreads and
needs only each side's mean, sd and n, so a verdict can be re-judged from a published table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize, stats

ALPHA = 0.05  # two-sided significance level of every claim rule
POWER = 0.8  # for the detectable effect the report states
RESOLUTION = 0.001  # the smallest sd taken as real for a 0-1 metric (token accuracy, exact-match)


@dataclass(frozen=True)
class Comparison:
    """`better` minus `worse`: the difference of means, Welch's t, its degrees of freedom and two-sided p,
    Hedges' g (the difference in pooled-sd units, small-sample corrected) and `threshold`, the smallest
    difference this pair's spreads and seeds would have made significant."""

    difference: float
    t: float
    df: float
    p: float
    hedges_g: float
    threshold: float

    @property
    def real(self) -> bool:
        """The rule's question: is `better` better, at p < ALPHA?"""
        return self.difference > 0 and self.p < ALPHA

    def text(self, digits: int = 3) -> str:
        """`difference 0.862 (Welch p 7e-06, Hedges g 240; significant above 0.010)`."""
        return (
            f"difference {self.difference:.{digits}f} (Welch p {self.p:.2g}, Hedges g {self.hedges_g:.3g}; "
            f"significant above {self.threshold:.{digits}f})"
        )


def welch(
    mean_1: float, sd_1: float, n_1: int, mean_2: float, sd_2: float, n_2: int, resolution: float = RESOLUTION
) -> Comparison:
    """Compare side 1 with side 2 from their summaries (n >= 2 each).

    An sd below `resolution` (the metric's step: e.g. one step of a 0-1 score read to 3 digits) is taken
    as `resolution`: with sd 0 on both sides the t statistic would be infinite for any difference, yet
    seeds that agree exactly say only that the noise is below what the metric resolves.
    """
    if min(n_1, n_2) < 2:
        raise ValueError(f"Welch's test needs >= 2 seeds a side, got {n_1} and {n_2}")
    sd_1, sd_2 = max(sd_1, resolution), max(sd_2, resolution)
    t, p = stats.ttest_ind_from_stats(mean_1, sd_1, n_1, mean_2, sd_2, n_2, equal_var=False)
    v_1, v_2 = sd_1**2 / n_1, sd_2**2 / n_2
    df = (v_1 + v_2) ** 2 / (v_1**2 / (n_1 - 1) + v_2**2 / (n_2 - 1))
    pooled = math.sqrt(((n_1 - 1) * sd_1**2 + (n_2 - 1) * sd_2**2) / (n_1 + n_2 - 2))
    correction = 1 - 3 / (4 * (n_1 + n_2) - 9)
    difference = mean_1 - mean_2
    threshold = float(stats.t.ppf(1 - ALPHA / 2, df)) * math.sqrt(v_1 + v_2)
    return Comparison(difference, float(t), df, float(p), difference / pooled * correction, threshold)


def least_significant(n: int = 3) -> float:
    """The smallest difference (in units of a common sd) that can reach p < ALPHA with n seeds a side."""
    return float(stats.t.ppf(1 - ALPHA / 2, 2 * n - 2)) * math.sqrt(2 / n)


def detectable_effect(n: int = 3) -> float:
    """The effect (difference / common sd) a two-sided test at ALPHA finds with POWER, n seeds a side,
    equal spreads: 3.07 sd at n = 3 (a difference of 2.27 sd is the least that can be significant)."""
    df = 2 * n - 2
    critical = stats.t.ppf(1 - ALPHA / 2, df)

    def power(effect: float) -> float:
        """The upper tail only: the lower one is below 1e-6 at these effects (and scipy's is NaN there)."""
        return stats.nct.sf(critical, df, effect * math.sqrt(n / 2))

    return float(optimize.brentq(lambda effect: power(effect) - POWER, 1e-3, 10.0))
