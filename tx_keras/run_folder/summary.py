"""summary.json: the one file that says how a run ended (status, metrics, size, times, config)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tx_keras.run_folder.atomic_write import write_json

SUMMARY_NAME = "summary.json"


def write_summary(run_dir: Path, summary: dict[str, Any]) -> Path:
    """Written atomically: a reader sees the old file or the new one, never a torn one."""
    return write_json(run_dir / SUMMARY_NAME, summary, allow_nan=True)


def read_summary(run_dir: Path) -> dict[str, Any]:
    """The run's summary; `OSError` when it has none, `ValueError` (json's) when it is not JSON."""
    return json.loads((run_dir / SUMMARY_NAME).read_text(encoding="utf-8"))


# The keys readers use, with the types tx-train writes them with (None where the key may be null).
_NUMBER = (int, float)
_TYPES: dict[str, tuple[type, ...]] = {
    "status": (str,),
    "reason": (str,),
    "stopped_by": (str,),
    "export": (str, type(None)),
    "epochs": (int,),
    "optimizer_steps": (int,),
    "parameters": (int, type(None)),
    "wall_time_s": (*_NUMBER, type(None)),
    "metrics": (dict,),
    "config": (dict,),
}


def _well_typed(summary: dict[str, Any]) -> bool:
    """Whether the keys readers use hold what tx-train writes: a summary edited by hand or written by
    another program is read as no summary, not a traceback in a reader's arithmetic."""
    for key, types in _TYPES.items():
        value = summary.get(key)
        if key in summary and (isinstance(value, bool) or not isinstance(value, types)):
            return False
    metrics = summary.get("metrics", {})
    return all(isinstance(value, _NUMBER) and not isinstance(value, bool) for value in metrics.values())


def summary_or_none(run_dir: Path) -> dict[str, Any] | None:
    """The run's summary, None while it has none (running, killed) or it cannot be read as a JSON object
    whose known keys hold values of their types."""
    try:
        summary = read_summary(run_dir)
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) and _well_typed(summary) else None


STEP_BUDGET = "step budget"  # how `stopped_by` starts when trainer.max_steps ended the run


def completed_summary(run_dir: Path, epochs: int, max_steps: int | None = None) -> dict[str, Any] | None:
    """The run's summary if it already completed `epochs` epochs (a rerun skips it), else None.

    A run asked for more epochs than it has (`resume=RUN_DIR trainer.epochs=<more>`) is not done: it
    continues from its last checkpoint; so is one that stopped on its step budget and is asked for more
    steps (`trainer.max_steps=<more>`, or null: then its epochs decide). One that stopped on its time
    budget is done.
    """
    summary = summary_or_none(run_dir)
    if summary is None:
        return None
    if str(summary.get("stopped_by", "")).startswith(STEP_BUDGET):
        steps = summary.get("optimizer_steps", 0)
        finished = steps >= max_steps if max_steps else summary.get("epochs", 0) >= epochs
    else:
        finished = summary.get("epochs", 0) >= epochs or "stopped_by" in summary  # e.g. its time budget
    done = summary.get("status") == "completed" and finished
    return summary if done else None
