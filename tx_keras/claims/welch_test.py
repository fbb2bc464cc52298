"""Is a difference between two settings real, or shown to be small? Welch's t-test over seeds, one-sided in
the claimed direction, and its equivalence form (TOST) against a margin fixed in the rule.

Needs only each side's mean, sd and n, so a verdict can be re-judged from a published table. One level for
every claim: "holds" needs a one-sided p < ALPHA in the claimed direction; "does not hold" needs the TOST
p < ALPHA, i.e. the difference shown to lie within ± the rule's margin; anything else is inconclusive
(absence of evidence is not evidence of absence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from tx_keras.comparison import welch as welch_core

ALPHA = 0.05  # the level of every claim test: one-sided Welch for "holds", TOST for "does not hold"
POWER = 0.8  # for the detectable effect the report states
RESOLUTION = 0.001  # the smallest sd taken as real for a 0-1 metric (token accuracy, exact-match)


@dataclass(frozen=True)
class Comparison(welch_core.Welch):
    """`better` minus `worse` (the claimed direction): comparison/welch.py's Welch test (difference, its
    standard error, degrees of freedom, Hedges' g, t, p two-sided, TOST) read as a claim's rule: the
    one-sided p of "better is larger" and `threshold`, the smallest difference this pair's spreads and
    seeds would have made significant."""

    @property
    def p(self) -> float:
        return self.p_greater

    @property
    def threshold(self) -> float:
        return self.least_significant(ALPHA, one_sided=True)

    @property
    def real(self) -> bool:
        """The rule's yes: `better` is larger, one-sided p < ALPHA."""
        return self.p < ALPHA

    def equivalent(self, margin: float) -> bool:
        """The rule's no: the difference is shown to be smaller than `margin` (TOST p < ALPHA)."""
        return self.p_equivalent(margin) < ALPHA

    def text(self, digits: int = 3, margin: float | None = None) -> str:
        """`difference 0.862 (Welch one-sided p 1e-06, Hedges g 240; significant above 0.006)`, with the
        equivalence test against `margin` when given."""
        tost = f"; within ± {margin:g}: TOST p {self.p_equivalent(margin):.2g}" if margin is not None else ""
        return (
            f"difference {self.difference:.{digits}f} (Welch one-sided p {self.p:.2g}, Hedges g "
            f"{self.hedges_g:.3g}; significant above {self.threshold:.{digits}f}{tost})"
        )


def welch(
    mean_1: float, sd_1: float, n_1: int, mean_2: float, sd_2: float, n_2: int, resolution: float = RESOLUTION
) -> Comparison:
    """Compare side 1 (claimed better) with side 2 from their summaries (n >= 2 each).

    An sd below `resolution` (the metric's step: one step of a 0-1 score read to 3 digits, one epoch of
    steps for a step count read once per epoch) is taken as `resolution`: with sd 0 on both sides the t
    statistic would be infinite for any difference, yet seeds that agree exactly say only that the noise
    is below what the metric resolves.
    """
    if min(n_1, n_2) < 2:
        raise ValueError(f"Welch's test needs >= 2 seeds a side, got {n_1} and {n_2}")
    core = welch_core.welch(mean_1, sd_1, n_1, mean_2, sd_2, n_2, resolution)
    return Comparison(core.difference, core.se, core.df, core.hedges_g)


def least_significant(n: int = 3) -> float:
    """The smallest difference (in units of a common sample sd) that can reach one-sided p < ALPHA with n
    seeds a side (equal sample sds give Welch 2n - 2 degrees of freedom)."""
    return float(stats.t.ppf(1 - ALPHA, 2 * n - 2)) * math.sqrt(2 / n)


def detectable_effect(n: int = 3) -> float:
    """The true effect (difference / common sd) that this test (Welch, one-sided at ALPHA) finds with
    POWER, n seeds a side, normal noise: simulated (comparison/welch.py), 2.7 sd at n = 3. The pooled-t
    formula would say 2.5 sd: Welch's degrees of freedom fall below 2n - 2 whenever the sample sds differ."""
    return welch_core.detectable_effect(n, ALPHA, POWER, one_sided=True)
