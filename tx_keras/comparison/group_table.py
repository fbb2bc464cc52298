"""The grouped comparison as rows (text, Markdown, CSV through table.py) and as JSON for a program."""

from __future__ import annotations

import json
import math

from tx_keras.comparison.groups import (
    ALPHA,
    Group,
    metric_summary,
    shared_knobs,
    varying_knobs,
)
from tx_keras.comparison.knob_value import shown_value
from tx_keras.comparison.welch import LEVEL


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.2g}"


def group_rows(groups: list[Group], metric: str, others: list[str]) -> tuple[list[str], list[list[str]]]:
    """Header and one row per group, best first: the knobs that vary, usable runs of all and diverged
    runs, the metric's mean ± sd and interval, the difference to the best with its simultaneous 95 %
    interval, Hedges' g and the Holm-corrected p, the verdict, and the `others` metrics' mean ± sd."""
    knobs = varying_knobs(groups)
    header = [
        "group",
        *knobs,
        "usable runs",
        "diverged",
        f"{metric} (mean ± sd)",
        f"{LEVEL:.0%} interval",
        f"minus best [{LEVEL:.0%} interval]",
        "Hedges g",
        "p (Holm)",
        "verdict",
        *(f"{name} (mean ± sd)" for name in others),
    ]
    rows = []
    for rank, group in enumerate(groups):
        setting = dict(group.setting)
        interval = group.summary.interval
        test = group.against_best
        rows.append(
            [
                str(rank + 1),
                *(shown_value(setting.get(knob, "")) for knob in knobs),
                group.count,
                str(group.diverged),
                group.summary.text(),
                f"[{interval[0]:.4f}, {interval[1]:.4f}]" if interval else group.note,
                test.interval_text() if test else "",
                _number(test.hedges_g if test else None, 2),
                _p(group.p_holm),
                group.verdict,
                *(metric_summary(group.runs, name).text() for name in others),
            ]
        )
    return header, rows


def group_caption(groups: list[Group], metric: str, runs: int) -> str:
    """The line above the table: what was grouped, what every group shares, how the test was done."""
    shared = shared_knobs(groups)
    same = f"; every group has {', '.join(f'{k}={v}' for k, v in shared.items())}" if shared else ""
    pairs = max((group.pairs for group in groups), default=0)
    return (
        f"{runs} runs in {len(groups)} groups (runs of one sweep folder that differ only by seed){same}. "
        f"Every pair of groups with >= 2 usable runs by {metric}: Welch's t-test, two-sided, Holm-corrected "
        f"over all {pairs} pair{'s' * (pairs != 1)} (the best is picked from the same data), 'worse than "
        f"the best' at p < {ALPHA}; minus best is the group minus the best with its {LEVEL:.0%} interval, "
        "simultaneous over the pairs (Bonferroni). A group under 2 usable runs is shown, never ranked "
        "best or tested."
    )


def groups_json(groups: list[Group], metric: str, metrics: list[str]) -> str:
    """Every group's setting, runs, per-metric n / mean / sd / interval and its test against the best."""
    records = []
    for group in groups:
        test = group.against_best
        per_metric = {}
        for name in metrics:
            summary = metric_summary(group.runs, name)
            interval = summary.interval
            per_metric[name] = {
                "n": summary.n,
                "mean": None if summary.n == 0 else summary.mean,
                "sd": None if summary.n < 2 else summary.sd,
                "interval": list(interval) if interval else None,
                "values": list(summary.values),
            }
        records.append(
            {
                "setting": dict(group.setting),
                "runs": [run.name for run in group.runs],
                "usable_runs": group.summary.n,
                "diverged_runs": group.diverged,
                "metrics": per_metric,
                "verdict": group.verdict,
                "note": group.note,
                "against_best": None
                if test is None
                else {
                    "difference": test.difference,
                    "interval": [test.low, test.high],
                    "hedges_g": test.hedges_g,
                    "welch_df": test.df,
                    "p": group.p,
                    "p_holm": group.p_holm,
                    "pairs_corrected": group.pairs,
                },
            }
        )
    document = {"metric": metric, "alpha": ALPHA, "interval_level": LEVEL, "groups": records}
    return json.dumps(document, indent=2) + "\n"
