"""A claim's pre-registered rule: every threshold its verdict uses, stated once, with the reason for its
margin and the date it was set, so a result can say whether its rule predates its runs.

The verdict functions (`verdicts.py`) read the thresholds from here and the rule's text is built from the
same fields, so the prose cannot drift from what is applied. A result from runs made before `set_on` was
produced under a rule written after it: the report calls it exploratory, never a verdict.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

ALPHA = 0.05  # the level of every claim test: one-sided Welch for "holds", TOST for "does not hold"


@dataclass(frozen=True)
class Rule:
    """`better` against `worse` on `metric` (the claimed direction): holds if `better` is larger at
    Welch one-sided p < `alpha` (and the levels, where set); does not hold if TOST shows the difference
    within ± `margin`, both arms having learned; inconclusive (nothing learned) when an arm the test
    needs stays below `floor`. `seeds` is the design's n a side. `set_on` / `set_in`: when and where this
    form of the rule (its thresholds as used) was set; `history`: its earlier forms, by commit."""

    metric: str
    better: str
    worse: str
    margin: float
    margin_reason: str
    floor: float
    floor_reason: str
    set_on: datetime.date
    set_in: str
    history: str
    seeds: int = 3
    alpha: float = ALPHA
    better_at_least: float | None = None
    worse_at_most: float | None = None
    min_gap: float = 0.0
    steps_margin_epochs: int = 0  # when both arms reach the target: the margin in epochs of steps

    def predates(self, runs_on: datetime.date | None) -> bool:
        """Was the rule set by the day the runs began (`runs_on`; unknown: taken as not)? Dates, not times:
        a rule set on the day of its runs counts as set before them."""
        return runs_on is not None and self.set_on <= runs_on

    def text(self) -> str:
        """The rule in words, built from the fields the verdict uses."""
        levels = []
        if self.worse_at_most is not None:
            levels.append(f"{self.worse} <= {self.worse_at_most:.3g}")
        if self.better_at_least is not None:
            levels.append(f"{self.better} >= {self.better_at_least:.3g}")
        if self.min_gap:
            levels.append(f"a difference >= {self.min_gap:g}")
        extra = f" with {', '.join(levels)}" if levels else ""
        steps = (
            f" (when both reach the target on every seed, the steps to it instead, margin "
            f"{self.steps_margin_epochs} epochs of steps)"
            if self.steps_margin_epochs
            else ""
        )
        return (
            f"{self.better} against {self.worse} on {self.metric}{steps}: holds if {self.better} is higher "
            f"at Welch one-sided p < {self.alpha:g}{extra}; does not hold if TOST (p < {self.alpha:g}, "
            f"Holm over the TOSTs behind one verdict) shows the difference within ± {self.margin:g} "
            f"({self.margin_reason}); inconclusive otherwise, and inconclusive (nothing learned) when an arm "
            f"stays below {self.floor:.3g} ({self.floor_reason}): a TOST needs both arms above it, 'holds' "
            f"the {self.better} arm. Designed for {self.seeds} seeds a side. Set {self.set_on} "
            f"({self.set_in}); before: {self.history}"
        )
