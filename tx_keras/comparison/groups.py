"""Runs grouped by their settings (every override except the seed), each group against the best.

A single run ranks variants by noise as readily as by effect: with seeds (`tx-train sweep=NAME seeds=3`)
each setting is a group with a mean, an sd and a 95 % interval, and each group is compared with the best
one by Welch's test, Holm-corrected for the number of groups compared, Hedges' g beside it. A group the
test cannot tell from the best is marked so: choosing between them is not a result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats
from statsmodels.stats.multitest import multipletests

from tx_keras.comparison.sweep_runs import RunRecord
from tx_keras.comparison.table import lower_is_better
from tx_keras.comparison.welch import Welch, welch

ALPHA = 0.05  # two-sided level of "differs from the best", after Holm's correction
LEVEL = 0.95  # coverage of each group's interval (Student's t over its runs)

Setting = tuple[tuple[str, str], ...]

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
        return sum(self.values) / self.n if self.values else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation (n - 1); NaN below two runs."""
        if self.n < 2:
            return math.nan
        return math.sqrt(sum((v - self.mean) ** 2 for v in self.values) / (self.n - 1))

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval of the mean (Student's t, n - 1 df); None below two runs."""
        if self.n < 2:
            return None
        half = float(stats.t.ppf((1 + LEVEL) / 2, self.n - 1)) * self.sd / math.sqrt(self.n)
        return self.mean - half, self.mean + half

    def text(self, digits: int = 4) -> str:
        """`0.9120 ± 0.0040` (the mean alone for one run, `n/a` for none)."""
        if not self.values:
            return "n/a"
        if self.n < 2:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.sd:.{digits}f}"


@dataclass(frozen=True)
class Group:
    """The runs of one setting, the metric over them, and the comparison with the best group."""

    setting: Setting
    runs: tuple[RunRecord, ...]
    summary: Summary
    verdict: str = NO_TEST
    against_best: Welch | None = None
    p: float | None = None  # two-sided Welch p against the best, uncorrected
    p_holm: float | None = None

    @property
    def note(self) -> str:
        """Why a group has no interval or no test, or ''."""
        if self.summary.n == 0:
            return "no completed run with this metric"
        if self.summary.n == 1:
            return "1 seed: no interval"
        return ""


def setting_of(run: RunRecord) -> Setting:
    """A run's overrides without its seed, sorted: the runs of one setting differ only by seed."""
    return tuple(sorted((key, value) for key, value in run.overrides.items() if key != "seed"))


def usable(run: RunRecord, metric: str) -> float | None:
    value = run.metrics.get(metric) if run.status == "completed" else None
    return None if value is None or math.isnan(value) else value


def group_runs(runs: list[RunRecord], metric: str) -> list[Group]:
    """The runs by setting, in the order settings first appear (the sweep's job order)."""
    by_setting: dict[Setting, list[RunRecord]] = {}
    for run in runs:
        by_setting.setdefault(setting_of(run), []).append(run)
    return [
        Group(setting, tuple(members), metric_summary(members, metric))
        for setting, members in by_setting.items()
    ]


def metric_summary(runs: list[RunRecord] | tuple[RunRecord, ...], metric: str) -> Summary:
    return Summary(tuple(value for run in runs if (value := usable(run, metric)) is not None))


def compare_groups(runs: list[RunRecord], metric: str) -> list[Group]:
    """The groups best first by mean `metric`, each with its verdict against the best: Welch's test
    (two-sided: the best was picked after seeing the means), Holm-corrected over the groups tested."""
    sign = 1.0 if lower_is_better(metric) else -1.0
    groups = group_runs(runs, metric)
    ranked = sorted(groups, key=lambda g: (g.summary.n == 0, sign * g.summary.mean if g.summary.n else 0.0))
    if not ranked or ranked[0].summary.n == 0:
        return ranked
    best, others = ranked[0], ranked[1:]
    if best.summary.n < 2:
        return [Group(best.setting, best.runs, best.summary, BEST), *others]
    floor = resolution(metric)
    tested = [i for i, group in enumerate(others) if group.summary.n >= 2]
    tests = {}
    for i in tested:
        a, b = best.summary, others[i].summary
        tests[i] = welch(a.mean, a.sd, a.n, b.mean, b.sd, b.n, floor)
    p_values = [tests[i].p_two_sided for i in tested]
    corrected = list(multipletests(p_values, alpha=ALPHA, method="holm")[1]) if p_values else []
    result = [Group(best.setting, best.runs, best.summary, BEST)]
    for i, group in enumerate(others):
        if i in tests:
            p_holm = float(corrected[tested.index(i)])
            verdict = WORSE if p_holm < ALPHA else TIED
            result.append(
                Group(
                    group.setting, group.runs, group.summary, verdict, tests[i], tests[i].p_two_sided, p_holm
                )
            )
        else:
            result.append(group)
    return result


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
