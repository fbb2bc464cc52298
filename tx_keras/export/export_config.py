"""The `export` config group's keys as a dataclass: what the end of a run writes to RUN_DIR/export/.

Hydra validates conf/export/*.yaml against it (conf/__init__.py registers it as `schema/export`), so an
unknown key or a wrong type fails while the config is composed, and each key's range or choices are on
its field (tx_keras/config_rules.py): building one is checking it. Imports nothing heavy: the config tree
imports it before TensorFlow starts, and the export checks its settings against it without TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tx_keras.config_rules import between, check_rules, one_of, ruled

# How the exported `translate_with_attention` signature reports cross-attention: averaged, or every head.
ATTENTION_MODES = ("mean", "heads")


def _length_penalty(value: Any) -> str | None:
    """`auto` (chosen on validation, tx_keras/evaluation/length_penalty_choice.py) or an alpha >= 0."""
    if isinstance(value, str):
        return None if value == "auto" else "is not allowed; choose auto or a number >= 0"
    return None if value >= 0 else "must be >= 0 (or auto)"


def _penalty_grid(value: Any) -> str | None:
    if len(value) and min(value) >= 0:
        return None
    return "must be a non-empty list of numbers >= 0, e.g. [0.6,1.0,1.4]"


@dataclass(frozen=True)
class ExportConfig:
    """The SavedModel and model.keras written at the end of a completed run (docs/serving.md)."""

    enabled: bool = True  # export at the end of a completed tx-train run; false = only tx-export
    beam_width: int = ruled(4, between(1, 1000))  # hypotheses kept while decoding; 1 = greedy
    # GNMT alpha >= 0, or auto (chosen on validation, real text only)
    length_penalty: float | int | str = ruled(0.6, _length_penalty)
    length_penalty_grid: list[float] = ruled(rule=_penalty_grid, factory=lambda: [0.6, 1.0, 1.4])  # auto's
    attention: str = ruled("mean", one_of(*ATTENTION_MODES))  # translate_with_attention's: mean | heads
    # decode the test split at the end (test_* figures, translations/); false where validation chooses
    # (a search's trials): no figure a trial records is a test figure
    evaluate_test: bool = True

    def __post_init__(self) -> None:
        check_rules(self, "export")
