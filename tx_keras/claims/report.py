"""report.md: per claim the question, the experiment, the rule, the verdict with its numbers, the table of
mean ± sd over seeds per setting, and the plots."""

from __future__ import annotations

import datetime
from collections import defaultdict
from pathlib import Path

from tx_keras.claims.assessment import Assessment
from tx_keras.claims.settings import Setting, value_of
from tx_keras.claims.verdicts import steps_text
from tx_keras.claims.welch_test import ALPHA, POWER, detectable_effect, least_significant
from tx_keras.run_folder.atomic_write import write_text


def _cell(setting: Setting, knob: str) -> str:
    value = dict(setting).get(knob)
    return "" if value is None else value


def table(assessment: Assessment) -> str:
    """The per-setting table in Markdown: knobs, seeds used, metric mean ± sd, what did not count, time."""
    claim, evidence = assessment.claim, assessment.evidence
    wall: dict[Setting, list[float]] = defaultdict(list)
    for run in assessment.runs:
        if run.record.wall_time_s is not None:
            wall[run.setting].append(float(run.record.wall_time_s))
    knobs = [knob for knob in claim.knobs if any(value_of(s, knob) is not None for s in evidence.stats)]
    header = [knob.rsplit(".", 1)[-1] for knob in knobs] + ["seeds", f"{claim.metric} (mean ± sd)"]
    if claim.beside:
        header.append(f"{claim.beside} (mean ± sd)")
    header += ["diverged", "failed or unfinished"]
    if claim.steps_to is not None:
        header.append(f"steps to {claim.steps_to}")
    header.append("wall time per run (s)")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for setting, stats in evidence.stats.items():
        row = [_cell(setting, knob) for knob in knobs]
        row += [str(stats.n), stats.text()]
        if claim.beside:
            beside = evidence.beside.get(setting)
            row.append(beside.text() if beside else "n/a")
        row += [str(stats.diverged), str(stats.missing)]
        if claim.steps_to is not None:
            row.append(steps_text(evidence.steps.get(setting, ())))
        times = wall.get(setting, [])
        row.append(f"{sum(times) / len(times):.0f}" if times else "")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def section(number: int, assessment: Assessment) -> str:
    """One claim's part of the report."""
    claim, verdict = assessment.claim, assessment.verdict
    total = sum(run.record.wall_time_s or 0.0 for run in assessment.runs)
    command = " ".join(filter(None, ("tx-train", f"sweep={claim.sweep}", claim.arguments)))
    parts = [
        f"## {number}. {claim.title}: {verdict.outcome}\n",
        f"**Question.** {claim.question}\n",
        f"**Experiment.** {claim.measures} Command: `{command}`; read from "
        f"`{assessment.sweep_dir}` ({len(assessment.runs)} runs, {total / 60:.1f} min of run time).\n",
        f"**Rule (fixed before the runs).** {claim.rule}.\n",
        f"**Verdict: {verdict.outcome}.** {verdict.reason}.\n",
    ]
    if verdict.notes:
        parts.append("".join(f"- {note}\n" for note in verdict.notes))
    parts.append(table(assessment))
    parts += [f"{caption}:\n\n{markdown}" for caption, markdown in assessment.tables]
    parts += [f"![{caption}]({name})\n" for caption, name in assessment.figures]
    return "\n".join(parts)


def write_report(assessments: list[Assessment], out_dir: Path) -> Path:
    """Write out_dir/report.md (the plots are already there) and return its path."""
    today = datetime.date.today().isoformat()
    lines = [
        "# The lecture's claims, tested\n",
        f"Written by `tx-claims` on {today}. Every rule was fixed before the runs "
        "(`tx_keras/claims/definitions.py`, `verdicts.py`); a difference counts only when Welch's t-test "
        f"over seeds gives p < {ALPHA} in the claimed direction (Hedges' g printed beside it), a sweep "
        "in which no setting learned the task is inconclusive, and a run that diverged counts as "
        f"accuracy 0. With 3 seeds a side the test finds a difference of {detectable_effect(3):.1f} "
        f"seed-to-seed sd {POWER:.0%} of the time, and none below {least_significant(3):.2f} sd.\n",
        "| claim | verdict | sweep |",
        "|---|---|---|",
    ]
    lines += [f"| {a.claim.title} | **{a.verdict.outcome}** | `{a.sweep_dir}` |" for a in assessments]
    body = "\n".join(lines) + "\n\n" + "\n".join(section(i + 1, a) for i, a in enumerate(assessments))
    return write_text(out_dir / "report.md", body)
