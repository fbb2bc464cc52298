"""One setting's result over seeds: the values, their mean and spread, and what did not count."""

from __future__ import annotations

from dataclasses import dataclass

from tx_keras.comparison.groups import Summary


@dataclass(frozen=True)
class SeedStats(Summary):
    """The metric of every usable seed of one setting: tx-compare's group `Summary` (n, mean, sd, interval),
    plus what the claims report says was left out or counted as nothing.

    `diverged` runs are included in `values` (as what they scored: a run whose loss became NaN learned
    nothing, so its accuracy counts as 0); `missing` counts failed and unfinished runs, which are left out.
    """

    diverged: int = 0
    missing: int = 0

    def text(self, digits: int = 3) -> str:
        """`0.912 ± 0.004` (the sd is left out below two seeds)."""
        return super().text(digits)
