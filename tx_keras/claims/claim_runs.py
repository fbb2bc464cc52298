"""A claim's sweep folder read back: every job as (setting, seed, outcome), grouped into the evidence a
rule judges."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tx_keras.claims.definitions import Claim, Evidence
from tx_keras.claims.event_scalars import (
    accuracy_curve,
    diagnostics_at_end,
    diagnostics_at_init,
    steps_per_epoch,
    steps_to_reach,
)
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting, make_setting, value_of
from tx_keras.comparison import RunRecord, collect_runs
from tx_keras.run_folder.summary import summary_or_none


@dataclass(frozen=True)
class ClaimRun:
    """One job: its setting (the swept knobs without the seed), its seed and its resolved config."""

    record: RunRecord
    setting: Setting
    seed: str
    config: dict


def load_runs(sweep_dir: Path) -> list[ClaimRun]:
    """Every job folder of the sweep, finished or not."""
    runs = []
    for record in collect_runs(sweep_dir):
        knobs = dict(record.overrides)
        config = (summary_or_none(record.path) or {}).get("config", {})
        seed = knobs.pop("seed", str(config.get("seed", 0)))
        runs.append(ClaimRun(record, make_setting(knobs), seed, config))
    return runs


def outcome(run: ClaimRun, metric: str) -> float | None:
    """The run's metric: as recorded when completed, 0 when diverged (it learned nothing usable), None when
    it failed, is unfinished or lacks the metric."""
    if run.record.status == "diverged":
        return 0.0
    value = run.record.metrics.get(metric) if run.record.status == "completed" else None
    return None if value is None or math.isnan(value) else value


def _beside(runs: list[ClaimRun], metric: str) -> dict[Setting, SeedStats]:
    """A second metric over seeds per setting (the completed runs that recorded it)."""
    values: dict[Setting, list[float]] = defaultdict(list)
    for run in runs:
        value = outcome(run, metric) if run.record.status == "completed" else None
        if value is not None:
            values[run.setting].append(value)
    return {setting: SeedStats(tuple(found)) for setting, found in values.items()}


def gather(runs: list[ClaimRun], claim: Claim) -> Evidence:
    """Per setting: the metric over seeds and, if the claim asks, each seed's steps to its target accuracy
    and its second metric."""
    values: dict[Setting, list[float]] = defaultdict(list)
    diverged: dict[Setting, int] = defaultdict(int)
    missing: dict[Setting, int] = defaultdict(int)
    steps: dict[Setting, list[int | None]] = defaultdict(list)
    for run in runs:
        value = outcome(run, claim.metric)
        if value is None:
            missing[run.setting] += 1
            continue
        values[run.setting].append(value)
        diverged[run.setting] += run.record.status == "diverged"
        if claim.steps_to is not None:
            reached = None
            if run.record.status == "completed":
                curve = accuracy_curve(run.record.path, steps_per_epoch(run.config))
                reached = steps_to_reach(*curve, claim.steps_to)
            steps[run.setting].append(reached)
    settings = {run.setting for run in runs}
    stats = {
        setting: SeedStats(tuple(values[setting]), diverged[setting], missing[setting])
        for setting in settings
    }
    config = next((run.config for run in runs if run.config), {})
    found_steps = {setting: tuple(found) for setting, found in steps.items()}
    beside = _beside(runs, claim.beside) if claim.beside else {}
    return Evidence(stats, found_steps, config, beside)


def diagnostics_by_line(
    runs: list[ClaimRun], knobs: tuple[str, ...], prefix: str
) -> dict[Setting, dict[str, float]]:
    """The `prefix` diagnostic (`gradient_norm`, `rank_collapse`) at initialisation per layer, averaged
    over the runs that share the values of `knobs`, among the runs at the deepest depth swept."""
    depths = {value_of(run.setting, "model.num_encoder_layers") for run in runs} - {None}
    deepest = max(depths) if depths else None
    groups: dict[Setting, list[dict[str, float]]] = defaultdict(list)
    for run in runs:
        if deepest is not None and value_of(run.setting, "model.num_encoder_layers") != deepest:
            continue
        values = diagnostics_at_init(run.record.path, prefix)
        if values:
            groups[tuple(pair for pair in run.setting if pair[0] in knobs)].append(values)
    return {line: _mean_by_layer(group) for line, group in sorted(groups.items())}


def final_diagnostics(runs: list[ClaimRun], prefix: str) -> dict[Setting, dict[str, float]]:
    """The `prefix` diagnostic's last logged value per layer (`cross/layer_1`), mean over the completed
    runs of each setting; settings whose runs logged none are left out."""
    groups: dict[Setting, list[dict[str, float]]] = defaultdict(list)
    for run in runs:
        values = diagnostics_at_end(run.record.path, prefix) if run.record.status == "completed" else {}
        if values:
            groups[run.setting].append(values)
    return {setting: _mean_by_layer(group) for setting, group in groups.items()}


def _mean_by_layer(per_run: list[dict[str, float]]) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for values in per_run:
        for name, value in values.items():
            sums[name] += value
            counts[name] += 1
    return {name: sums[name] / counts[name] for name in sorted(sums)}


def curves_by_setting(runs: list[ClaimRun]) -> dict[Setting, list[tuple[list[int], list[float]]]]:
    """Each completed run's validation accuracy against training steps, grouped by setting."""
    curves: dict[Setting, list[tuple[list[int], list[float]]]] = defaultdict(list)
    for run in runs:
        if run.record.status == "completed":
            curve = accuracy_curve(run.record.path, steps_per_epoch(run.config))
            if curve[0]:
                curves[run.setting].append(curve)
    return dict(curves)
