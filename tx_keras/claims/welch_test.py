"""Is a difference between two settings real, or shown to be small, and could these seeds have told?
comparison/welch.py's Welch test read as a claim's rule: one-sided in the claimed direction, its TOST
against the rule's margin, and the power of both for the n actually run (comparison/power.py)."""

from __future__ import annotations

from dataclasses import dataclass

from tx_keras.claims.rule import ALPHA
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.comparison.power import TARGET, seeds_for, tost_power, welch_power
from tx_keras.comparison.welch import Welch, welch

RESOLUTION = 0.001  # the smallest sd taken as real for a 0-1 metric (token accuracy, exact-match)


@dataclass(frozen=True)
class Comparison:
    """`better` minus `worse` (the claimed direction) by Welch's test; `n` the seeds a side the power
    figures use (the smaller side's)."""

    test: Welch
    n: int

    @property
    def difference(self) -> float:
        return self.test.difference

    @property
    def p(self) -> float:
        """One-sided p of "better is larger"."""
        return self.test.p_greater

    @property
    def real(self) -> bool:
        """The rule's yes: `better` is larger, one-sided p < ALPHA."""
        return self.p < ALPHA

    def p_equivalent(self, margin: float) -> float:
        return self.test.p_equivalent(margin)

    def welch_power(self, effect: float) -> float:
        """The chance this one-sided test finds a true difference of `effect` at this pair's sd and n."""
        return welch_power(round(effect / self.test.sd, 3), self.n, ALPHA)

    def tost_power(self, margin: float, alpha: float = ALPHA) -> float:
        """The chance TOST shows the difference within ± `margin` when it is truly 0, at this sd and n."""
        return tost_power(round(margin / self.test.sd, 3), self.n, alpha)

    def tost_seeds(self, margin: float, alpha: float = ALPHA) -> int | None:
        """The seeds a side at which TOST would reach TARGET power at a true difference 0."""
        return seeds_for(lambda n: tost_power(round(margin / self.test.sd, 3), n, alpha))

    def text(self, digits: int = 3) -> str:
        """`difference 0.862 [0.85, 0.87] (Welch one-sided p 1e-06, Hedges g 237)`."""
        return (
            f"difference {self.test.interval_text(digits)} (95 % interval; Welch one-sided p "
            f"{self.p:.2g}, Hedges g {self.test.hedges_g:.3g}, n {self.n} a side)"
        )

    def power_text(self, effect: float, margin: float, alpha: float = ALPHA) -> str:
        """The power of both tests at this n, and the seeds that would put "does not hold" in reach."""
        tost = self.tost_power(margin, alpha)
        text = (
            f"power at n {self.n}: Welch {self.welch_power(effect):.0%} for a true {effect:g}, TOST "
            f"{tost:.0%} at a true 0 (sd {self.test.sd:.3g})"
        )
        if tost < TARGET:
            needed = self.tost_seeds(margin, alpha)
            more = f"{needed} seeds a side would give {TARGET:.0%}" if needed else "no n up to 200 would"
            text += f"; 'does not hold' is out of reach at this n ({more})"
        return text


def compare(better: SeedStats, worse: SeedStats, resolution: float = RESOLUTION) -> Comparison:
    """Welch's test of `better` against `worse` (>= 2 seeds each)."""
    return Comparison(welch(better.values, worse.values, resolution), min(better.n, worse.n))
