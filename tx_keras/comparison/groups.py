"""Runs grouped by their settings (every override except the seed, and the sweep folder), each group
against the best, the selection of the best accounted for.

A single run ranks variants by noise as readily as by effect: with seeds (`tx-train sweep=NAME seeds=3`)
each setting is a group with a mean, an sd and a 95 % interval. The best is picked from the same data it
is then compared on, so every pair of groups is tested (Welch's t-test, two-sided) and Holm's correction
runs over all of them: whichever group comes out best, the chance of calling any group worse when all
are equal stays at most ALPHA (docs/decisions/comparison-test.md says why this and not Games-Howell or
Hsu's MCB). A group with fewer than 2 usable runs is shown with its count and never crowned or tested;
runs of different sweep folders are never pooled unless asked (`pool_sweeps`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import PurePosixPath

import numpy as np
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from tx_keras.comparison.sweep_runs import RunRecord
from tx_keras.comparison.table import lower_is_better
from tx_keras.comparison.welch import LEVEL, Welch, welch

ALPHA = 0.05  # two-sided level of "worse than the best", after Holm's correction over every pair

Setting = tuple[tuple[str, str], ...]
SWEEP = "sweep"  # the group key's entry for the folder a run's sweep wrote

# Verdicts of a group against the best (the best itself is BEST).
BEST = "best"
TIED = "cannot be told from the best"
WORSE = "worse than the best"
NO_TEST = "not tested"


def resolution(metric: str) -> float:
    """The smallest sd taken as real for `metric`: a 0-1 score read to 3 digits, a 0-100 score (BLEU,
    chrF) to 2 decimals, a loss to 4; below it, seeds that agree say only that the noise is below what
    the metric resolves (and Welch's t would be infinite for any difference)."""
    if metric.endswith(("bleu", "chrf")):
        return 0.01
    if metric.endswith("loss"):
        return 1e-4
    return 0.001


@dataclass(frozen=True)
class Summary:
    """One metric over a group's usable runs (completed, metric recorded and finite)."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation (n - 1); NaN below two runs."""
        return float(np.std(self.values, ddof=1)) if self.n >= 2 else math.nan

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval of the mean (Student's t, n - 1 df); None below two runs."""
        if self.n < 2:
            return None
        low, high = DescrStatsW(np.asarray(self.values)).tconfint_mean(alpha=1 - LEVEL)
        return float(low), float(high)

    def text(self, digits: int = 4) -> str:
        """`0.9120 ± 0.0040` (the mean alone for one run, `n/a` for none)."""
        if not self.values:
            return "n/a"
        if self.n < 2:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.sd:.{digits}f}"


@dataclass(frozen=True)
class Group:
    """The runs of one setting, the metric over them, and the comparison with the best group:
    `against_best` is this group minus the best, its interval simultaneous over the `pairs` tested."""

    setting: Setting
    runs: tuple[RunRecord, ...]
    summary: Summary
    verdict: str = NO_TEST
    against_best: Welch | None = None
    p: float | None = None  # two-sided Welch p against the best, uncorrected
    p_holm: float | None = None
    pairs: int = 0  # how many pairs Holm's correction ran over

    @property
    def diverged(self) -> int:
        return sum(run.status == "diverged" for run in self.runs)

    @property
    def count(self) -> str:
        """`2 of 3`: usable runs of all runs."""
        return f"{self.summary.n} of {len(self.runs)}"

    @property
    def note(self) -> str:
        """Why a group has no interval or no test, or ''."""
        if self.summary.n == 0:
            return "no completed run with this metric"
        if self.summary.n == 1:
            return f"{self.count} runs usable: no interval, not tested"
        return ""


def sweep_of(run: RunRecord) -> str:
    """The folder (under the folder given to tx-compare) that holds the run: its sweep."""
    return PurePosixPath(run.name).parent.as_posix()


def setting_of(run: RunRecord, pool_sweeps: bool = False) -> Setting:
    """A run's overrides without its seed, and its sweep folder unless `pool_sweeps`, sorted: the runs of
    one setting differ only by seed."""
    pairs = [(key, value) for key, value in run.overrides.items() if key != "seed"]
    if not pool_sweeps and sweep_of(run) != ".":
        pairs.append((SWEEP, sweep_of(run)))
    return tuple(sorted(pairs))


def usable(run: RunRecord, metric: str) -> float | None:
    value = run.metrics.get(metric) if run.status == "completed" else None
    return None if value is None or math.isnan(value) else value


def group_runs(runs: list[RunRecord], metric: str, pool_sweeps: bool = False) -> list[Group]:
    """The runs by setting, in the order settings first appear (the sweep's job order)."""
    by_setting: dict[Setting, list[RunRecord]] = {}
    for run in runs:
        by_setting.setdefault(setting_of(run, pool_sweeps), []).append(run)
    return [
        Group(setting, tuple(members), metric_summary(members, metric))
        for setting, members in by_setting.items()
    ]


def metric_summary(runs: list[RunRecord] | tuple[RunRecord, ...], metric: str) -> Summary:
    return Summary(tuple(value for run in runs if (value := usable(run, metric)) is not None))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-corrected p-values (statsmodels), in the order given."""
    if not len(p_values):
        return []
    return [float(p) for p in multipletests(list(p_values), alpha=ALPHA, method="holm")[1]]


def against_best(count: int, p_values: dict[tuple[int, int], float]) -> dict[int, float]:
    """Group 0 is the best of `count` groups; `p_values` holds every pair's uncorrected p. Returns each
    other group's Holm-corrected p against the best, corrected over all the pairs, so picking the best
    after seeing the means costs no error rate."""
    pairs = list(combinations(range(count), 2))
    corrected = dict(zip(pairs, holm([p_values[pair] for pair in pairs]), strict=True))
    return {i: corrected[(0, i)] for i in range(1, count)}


def compare_groups(runs: list[RunRecord], metric: str, pool_sweeps: bool = False) -> list[Group]:
    """The groups best first by mean `metric` (groups under 2 usable runs after the others, never
    crowned), each tested group with its verdict against the best: Welch's test of every pair of
    groups, two-sided, Holm over all the pairs; the difference to the best with its interval,
    simultaneous over the pairs (Bonferroni)."""
    sign = 1.0 if lower_is_better(metric) else -1.0
    groups = group_runs(runs, metric, pool_sweeps)
    ranked = sorted(
        groups,
        key=lambda g: (min(g.summary.n, 2) * -1, sign * g.summary.mean if g.summary.n else 0.0),
    )
    tested = [group for group in ranked if group.summary.n >= 2]
    rest = [group for group in ranked if group.summary.n < 2]
    if not tested:
        return ranked
    floor = resolution(metric)
    count = len(tested)
    m = count * (count - 1) // 2
    level = 1 - (1 - LEVEL) / max(m, 1)  # Bonferroni: the intervals hold together at LEVEL
    tests = {
        (i, j): welch(tested[j].summary.values, tested[i].summary.values, floor, level)
        for i, j in combinations(range(count), 2)
    }
    corrected = against_best(count, {pair: test.p_two_sided for pair, test in tests.items()})
    best = tested[0]
    result = [Group(best.setting, best.runs, best.summary, BEST, pairs=m)]
    for i in range(1, count):
        group, test = tested[i], tests[(0, i)]
        verdict = WORSE if corrected[i] < ALPHA else TIED
        result.append(
            Group(group.setting, group.runs, group.summary, verdict, test, test.p_two_sided, corrected[i], m)
        )
    return result + rest


def varying_knobs(groups: list[Group]) -> list[str]:
    """The knobs whose value differs between groups (the others are shown once, not in every row)."""
    values: dict[str, set[str]] = {}
    for group in groups:
        for key, value in group.setting:
            values.setdefault(key, set()).add(value)
    keys = {key for group in groups for key, _ in group.setting}
    return sorted(
        key
        for key in keys
        if len(values.get(key, ())) > 1 or any(key not in dict(group.setting) for group in groups)
    )


def shared_knobs(groups: list[Group]) -> dict[str, str]:
    """The knobs every group sets to the same value (e.g. the data split pinned by seeds=N)."""
    varying = set(varying_knobs(groups))
    return {key: value for key, value in (groups[0].setting if groups else ()) if key not in varying}
