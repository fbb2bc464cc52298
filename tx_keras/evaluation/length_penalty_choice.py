"""`export.length_penalty=auto`: pick the beam search's length penalty on validation, never on test."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

AUTO = "auto"


@dataclass(frozen=True)
class LengthPenaltyChoice:
    """The grid's validation chrF per penalty and the chosen penalty: the highest chrF, ties to the first
    (smaller) alpha, listed in summary.json so a reader can see what the test figure was decoded with."""

    chosen: float
    validation_chrf: Mapping[float, float]
    beam_width: int

    def record(self) -> dict[str, Any]:
        """The summary.json field."""
        return {
            "chosen": self.chosen,
            "chosen_by": f"validation chrF, beam width {self.beam_width}",
            "grid": [
                {"alpha": alpha, "validation_chrf": round(chrf, 4)}
                for alpha, chrf in self.validation_chrf.items()
            ],
        }


def choose_length_penalty(
    grid: Sequence[float], validation_chrf: Callable[[float], float], beam_width: int
) -> LengthPenaltyChoice:
    """Score every alpha of `grid` with `validation_chrf(alpha)` (a beam decode of the validation split)
    and keep the best."""
    if not grid:
        raise ValueError("the length-penalty grid is empty")
    scores = {float(alpha): float(validation_chrf(float(alpha))) for alpha in grid}
    best = max(scores, key=lambda alpha: (scores[alpha], -list(scores).index(alpha)))
    return LengthPenaltyChoice(best, scores, beam_width)
