"""One setting's result over seeds: the values, their mean and spread, and what did not count."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SeedStats:
    """The metric of every usable seed of one setting.

    `diverged` runs are included in `values` (as what they scored: a run whose loss became NaN learned
    nothing, so its accuracy counts as 0); `missing` counts failed and unfinished runs, which are left out.
    """

    values: tuple[float, ...]
    diverged: int = 0
    missing: int = 0

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / self.n if self.values else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation over seeds (n - 1 in the denominator); NaN below two seeds."""
        if self.n < 2:
            return math.nan
        mean = self.mean
        return math.sqrt(sum((value - mean) ** 2 for value in self.values) / (self.n - 1))

    def text(self, digits: int = 3) -> str:
        """`0.912 ± 0.004` (the sd is left out below two seeds)."""
        if not self.values:
            return "n/a"
        if self.n < 2:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.sd:.{digits}f}"
