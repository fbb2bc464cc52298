"""A sweep as one table: a row per run, sorted by a metric, as text, Markdown and CSV."""

from __future__ import annotations

import csv
import io
import math

from tx_keras.comparison.knob_value import shown_value
from tx_keras.comparison.sweep_runs import RunRecord

# The metric columns shown, in order, when the runs have them.
METRIC_COLUMNS = (
    "validation_exact_match",
    "test_exact_match",
    "validation_accuracy",
    "validation_loss",
    "test_bleu",
    "test_chrf",
)


def lower_is_better(metric: str) -> bool:
    return metric.endswith("loss")


def sort_runs(runs: list[RunRecord], metric: str) -> list[RunRecord]:
    """Best first by `metric`; runs without it (failed, unfinished) last, in job order."""
    sign = 1.0 if lower_is_better(metric) else -1.0

    def key(run: RunRecord) -> tuple[int, float]:
        value = run.metrics.get(metric, math.nan)
        return (1, 0.0) if math.isnan(value) else (0, sign * value)

    return sorted(runs, key=key)


def short_name(name: str) -> str:
    """A job folder `3_model.num_heads=8` is job `3` (its overrides have their own columns); a nested
    run keeps its path: `sweeps/heads/<date>_<time>/3`, `<date>/<time>`."""
    parent, _, last = name.rpartition("/")
    job = last.split("_", 1)[0]
    return f"{parent}/{job}" if parent else job


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def table_rows(runs: list[RunRecord], metric: str, exact: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows: the swept knobs, status, metrics (the sort metric first), size and wall time.
    Float knobs are shown to 4 significant digits unless `exact` (the CSV keeps what the sweeper wrote)."""
    knob_text = str if exact else shown_value
    knobs = sorted({key for run in runs for key in run.overrides})
    present = {name for run in runs for name in run.metrics}
    metrics = [metric] + [name for name in METRIC_COLUMNS if name in present and name != metric]
    header = ["run", *knobs, "status", *metrics, "parameters", "wall_time_s"]
    rows = []
    for run in sort_runs(runs, metric):
        rows.append(
            [
                short_name(run.name),
                *(knob_text(run.overrides.get(knob, "")) for knob in knobs),
                run.status,
                *(_cell(run.metrics.get(name, math.nan)) for name in metrics),
                _cell(run.parameters),
                _cell(run.wall_time_s),
            ]
        )
    return header, rows


def as_text(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n"


def as_markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def as_csv(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()
