"""A swept knob's value as a reader sees it. Optuna writes a float override with all its digits
(`model.dropout=0.11061755119828923`): such values make tables and axis labels unreadable, and 4
significant digits still tell trials apart. Files meant for programs (CSV, JSON) keep the full text."""

from __future__ import annotations

import math

SIGNIFICANT = 4  # digits shown of a float knob


def knob_number(text: str) -> float | None:
    """The knob's value as a finite number, None for a word (a choice, a path) or NaN / inf."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def shown_value(text: str) -> str:
    """'0.11061755119828923' -> '0.1106'; a value with at most 4 significant digits ('1e-2', '2.0'),
    an integer, a word or a path as written."""
    value = knob_number(text)
    if value is None or not any(mark in text for mark in ".eE"):
        return text
    mantissa = text.lower().split("e")[0]
    digits = "".join(char for char in mantissa if char.isdigit()).lstrip("0").rstrip("0")
    return f"{value:.{SIGNIFICANT}g}" if len(digits) > SIGNIFICANT else text
