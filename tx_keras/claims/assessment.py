"""One claim judged on its finished sweep: the evidence, the verdict by the claim's rule, and the plots."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from pathlib import Path

from tx_keras.claims.claim_runs import (
    ClaimRun,
    curves_by_setting,
    diagnostics_by_line,
    final_diagnostics,
    gather,
    load_runs,
)
from tx_keras.claims.definitions import Claim, Evidence
from tx_keras.claims.plots import plot_curves, plot_layers, plot_metric
from tx_keras.claims.settings import Setting, label, sort_key
from tx_keras.claims.verdicts import Verdict


@dataclass(frozen=True)
class Assessment:
    """What the report shows for one claim; `runs_on` the day its runs began, `figures` are (caption,
    file name in the report folder), `tables` (caption, Markdown table) of its end-of-training
    diagnostics."""

    claim: Claim
    sweep_dir: Path
    runs: list[ClaimRun]
    evidence: Evidence
    verdict: Verdict
    runs_on: datetime.date | None = None
    figures: list[tuple[str, str]] = field(default_factory=list)
    tables: list[tuple[str, str]] = field(default_factory=list)


def _by_swept(stats: dict[Setting, object], knobs: tuple[str, ...]) -> dict[Setting, object]:
    """The settings cut to the claim's knobs (for labels: a corpus' `data.path` given to every job is no
    setting), unless that would merge settings."""
    swept = {tuple(pair for pair in setting if pair[0] in knobs): value for setting, value in stats.items()}
    return swept if len(swept) == len(stats) else stats


_KIND_ORDER = {"encoder_self": 0, "decoder_self": 1, "cross": 2}


def _layer_order(name: str) -> tuple[int, int, str]:
    """`encoder_self/layer_2` -> (0, 2, name): encoder self-attention, decoder self-attention, cross, each
    by depth (names of another form last, alphabetically)."""
    kind, _, layer = name.partition("/layer_")
    return (_KIND_ORDER.get(kind, len(_KIND_ORDER)), int(layer) if layer.isdigit() else 0, name)


def layer_table(values: dict[Setting, dict[str, float]], knobs: tuple[str, ...]) -> str:
    """Settings down (in `knobs` order), layers across, each value to 3 digits."""
    values = _by_swept(values, knobs)
    settings = sorted(values, key=lambda setting: sort_key(setting, knobs))
    layers = sorted({layer for by_layer in values.values() for layer in by_layer}, key=_layer_order)
    lines = ["| setting | " + " | ".join(layers) + " |", "|---|" + "---|" * len(layers)]
    for setting in settings:
        cells = [f"{values[setting][layer]:.3f}" if layer in values[setting] else "" for layer in layers]
        lines.append(f"| {label(setting, knobs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def runs_began(sweep_dir: Path, runs: list[ClaimRun]) -> datetime.date | None:
    """The day a sweep's runs began: its folder's `<date>_<time>` name, else its oldest job folder's
    modification time (None without either)."""
    try:
        return datetime.date.fromisoformat(sweep_dir.name[:10])
    except ValueError:
        times = [run.record.path.stat().st_mtime for run in runs if run.record.path.exists()]
        return datetime.date.fromtimestamp(min(times)) if times else None


def assess(claim: Claim, sweep_dir: Path, out_dir: Path) -> Assessment:
    """Read the sweep, apply the claim's rule, draw its plots into `out_dir`."""
    runs = load_runs(sweep_dir)
    evidence = gather(runs, claim)
    ordered = dict(sorted(evidence.stats.items(), key=lambda item: sort_key(item[0], claim.knobs)))
    evidence = Evidence(ordered, evidence.steps, evidence.config, evidence.beside)
    figures = []
    name = f"{claim.name}_{claim.metric}.png"
    plot_metric(_by_swept(evidence.stats, claim.knobs), claim.knobs, claim.metric_label, out_dir / name)
    figures.append((f"{claim.metric_label} per setting: each seed a dot, mean ± sd", name))
    if claim.diagnostics:
        for prefix, ylabel, log in (
            ("gradient_norm", "gradient norm at initialisation", True),
            ("rank_collapse", "rank-collapse ratio at initialisation", False),
        ):
            lines = diagnostics_by_line(runs, claim.diagnostics, prefix)
            if lines:
                name = f"{claim.name}_{prefix}.png"
                plot_layers(lines, claim.diagnostics, ylabel, out_dir / name, log)
                figures.append((f"{ylabel} per layer (deepest stack, mean over seeds)", name))
    if claim.steps_to is not None:
        curves = curves_by_setting(runs)
        if curves:
            name = f"{claim.name}_curves.png"
            ordered_curves = dict(sorted(curves.items(), key=lambda item: sort_key(item[0], claim.knobs)))
            plot_curves(ordered_curves, claim.knobs, claim.steps_to, out_dir / name)
            figures.append(("validation token accuracy against training steps, every seed", name))
    tables = []
    for prefix in claim.final:
        values = final_diagnostics(runs, prefix)
        if values:
            caption = f"`layers/{prefix}` at the end of training per layer (mean over seeds)"
            tables.append((caption, layer_table(values, claim.knobs)))
    runs_on = runs_began(sweep_dir, runs)
    verdict = replace(claim.judge(evidence), exploratory=not claim.rule.predates(runs_on))
    return Assessment(claim, sweep_dir, runs, evidence, verdict, runs_on, figures, tables)
