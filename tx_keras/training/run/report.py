"""The end-of-run report: what happened, where it is, the scores, and what to type next (~10 lines).

Built from summary.json's own fields, so the numbers a user reads are the ones the file holds.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH
from tx_keras.training.run.stage import clock

# The headline metrics, best first; a run shows those it has (BLEU/chrF only exist for real text).
HEADLINE = (
    "test_bleu_beam",
    "test_chrf_beam",
    "test_bleu",
    "test_chrf",
    "test_exact_match",
    "validation_exact_match",
    "test_accuracy",
    "test_loss",
)
_MAX_METRICS = 5


def headline_metrics(metrics: dict[str, float]) -> dict[str, float]:
    """The few metrics the report shows, by summary.json name."""
    return {name: metrics[name] for name in HEADLINE if name in metrics}


def _number(value: float) -> str:
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"


def _folder(path: Path) -> str:
    """A path to type: relative to the current folder when inside it."""
    try:
        path = path.resolve().relative_to(Path.cwd())
    except ValueError:
        pass
    return shlex.quote(str(path))


def run_report(summary: dict[str, Any], run_dir: Path) -> list[str]:
    """The report's lines for one run, from its summary."""
    status = summary.get("status", "unknown")
    folder = _folder(run_dir)
    lines = [f"tx-train: run {status}: {folder}"]
    if summary.get("reason"):
        lines.append(f"  reason:  {summary['reason']}")
    shown = list(headline_metrics(summary.get("metrics", {})).items())[:_MAX_METRICS]
    if shown:
        lines.append("  scores:  " + ", ".join(f"{name} {_number(value)}" for name, value in shown))
    epochs = summary.get("epochs")
    planned = summary.get("config", {}).get("trainer", {}).get("epochs")
    if epochs is not None:
        trained = f"{epochs} of {planned} epochs" if planned else f"{epochs} epochs"
        if "train_time_s" in summary:
            trained += f" in {clock(summary['train_time_s'])} of training"
        if "cpu_per_wall" in summary:  # runs from before it was recorded have none
            trained += f" ({summary['cpu_per_wall']:.2f} of {summary['cores']} cores busy)"
        if "optimizer_steps" in summary:  # what trainer.max_steps counts: a run to match on another host
            trained += f", {summary['optimizer_steps']:,} optimizer steps"
        if "precision" in summary:  # what trainer.precision (auto) became: it differs by machine and backend
            trained += f" in {summary['precision']}"
        if summary.get("step_parts", 1) > 1:  # models/row_parts_step.py
            trained += f", each step's rows in {summary['step_parts']} parts side by side"
        lines.append(f"  trained: {trained}; wall time {clock(summary.get('wall_time_s', 0.0))}")
    if summary.get("stopped_by"):
        lines.append(f"  stopped: {summary['stopped_by']}")
    if summary.get("export"):
        lines.append(f"  export:  {_folder(run_dir / summary['export'])}")
    if without := summary.get("without_tensorflow"):  # training/run/without_tensorflow.py
        lines.append(
            f"  no TensorFlow: scalars written by {without['scalars']}; skipped: "
            + "; ".join(without["skipped"])
        )
        if "export_later" in without:
            lines.append(f"  export later, where TensorFlow is installed: {without['export_later']}")
    lines.append(f"  next:    tx-board {folder}")
    if summary.get("export"):
        example = shlex.quote(summary.get("example_source") or "...")
        lines.append(f"           tx-translate {folder} {example}")
    elif status == "completed":
        lines.append(f"           tx-export {folder}")
    if status == "failed" and (run_dir / CHECKPOINT_PATH).exists():
        lines.append(f"           tx-train resume={folder}   (continues after the last checkpoint)")
    if status == "failed":
        lines.append("  log:     " + _folder(run_dir / "train.log"))
    return lines
