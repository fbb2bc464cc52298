"""report.md: per claim the question, the experiment, the rule, the verdict with its numbers, the table of
mean ± sd over seeds per setting, and the plots."""

from __future__ import annotations

import datetime
from collections import defaultdict
from pathlib import Path

from tx_keras.claims.assessment import Assessment
from tx_keras.claims.rule import ALPHA
from tx_keras.claims.settings import Setting, value_of
from tx_keras.claims.verdicts import steps_text
from tx_keras.comparison.power import TARGET
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
    seeds = sorted({stats.n for stats in assessment.evidence.stats.values()})
    used = "no" if not seeds else str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    when = assessment.runs_on.isoformat() if assessment.runs_on else "an unknown date"
    kind = "Exploratory result" if verdict.exploratory else "Verdict"
    order = "before" if claim.rule.predates(assessment.runs_on) else "not before"
    parts = [
        f"## {number}. {claim.title}: {verdict.label}\n",
        f"**Question.** {claim.question}\n",
        f"**Experiment.** {claim.measures} Command: `{command}`; read from "
        f"`{assessment.sweep_dir}` ({len(assessment.runs)} runs, {used} usable seeds a setting, "
        f"{total / 60:.1f} min of run time, runs of {when}).\n",
        f"**Rule** (set {claim.rule.set_on}, {order} these runs). {claim.rule.text()}.\n",
        f"**{kind}: {verdict.outcome}.** {verdict.reason}.\n",
    ]
    if verdict.notes:
        parts.append("".join(f"- {note}\n" for note in verdict.notes))
    parts.append(table(assessment))
    parts += [f"{caption}:\n\n{markdown}" for caption, markdown in assessment.tables]
    parts += [f"![{caption}]({name})\n" for caption, name in assessment.figures]
    return "\n".join(parts)


def header(today: str) -> list[str]:
    """What every verdict means and when a result is only exploratory."""
    return [
        "# The lecture's claims, tested\n",
        f"Written by `tx-claims` on {today}. The rules are in `tx_keras/claims/definitions.py` (every "
        "threshold once, with its reason and date) and `verdicts.py`. **holds**: the claimed difference is "
        f"significant, Welch's t-test over seeds one-sided in the claimed direction at p < {ALPHA}, with "
        "the claim's own levels; **does not hold**: the equivalence test (TOST, Holm over the TOSTs "
        "behind one verdict) shows the difference within the rule's margin, both arms having learned; "
        "**inconclusive (nothing learned)**: an arm the decision needs stays below the rule's floor; "
        "**inconclusive**: neither, or a setting missing. Each comparison gives the difference with its "
        "95 % interval, the seeds it used, and the power of both tests at that n (simulated Welch and "
        f"TOST, normal noise at the pair's sd); where the TOST's power is under {TARGET:.0%}, the seeds "
        "that would reach it. A diverged run counts as accuracy 0. A result from runs made before its "
        "rule was set is **exploratory**, never a verdict.\n",
    ]


def write_report(
    assessments: list[Assessment], out_dir: Path, found: dict[str, list[Path]] | None = None
) -> Path:
    """Write out_dir/report.md (the plots are already there) and return its path; `found` lists every
    sweep folder found per claim (the judged one among them)."""
    today = datetime.date.today().isoformat()
    lines = [*header(today), "| claim | verdict | sweep judged | other sweeps found |", "|---|---|---|---|"]
    for a in assessments:
        others = [folder for folder in (found or {}).get(a.claim.name, []) if folder != a.sweep_dir]
        listed = ", ".join(f"`{folder.name}`" for folder in others) or "none"
        lines.append(f"| {a.claim.title} | **{a.verdict.label}** | `{a.sweep_dir}` | {listed} |")
    body = "\n".join(lines) + "\n\n" + "\n".join(section(i + 1, a) for i, a in enumerate(assessments))
    return write_text(out_dir / "report.md", body)
