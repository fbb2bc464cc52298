"""Does a candidate beat what we have? Each group against one named baseline group (`tx-compare DIR
--baseline current`: the group of the runs in DIR/current): the planned test of a decision such as the
preset's (docs/corpora.md), where the all-pairs table answers a different question (which groups can be
told from the best). One-sided Welch in the better direction, Holm-corrected over the candidates, since
the decision adopts the best of them."""

from __future__ import annotations

from dataclasses import dataclass

from tx_keras.comparison.groups import SWEEP, Group, holm, resolution
from tx_keras.comparison.table import as_text, lower_is_better
from tx_keras.comparison.welch import Welch, welch
from tx_keras.user_error import UserError

ALPHA = 0.05  # one-sided level of "better than the baseline", after Holm's correction
BETTER = "better than the baseline"
NOT_SHOWN = "not shown better"


@dataclass(frozen=True)
class AgainstBaseline:
    """A candidate group minus the baseline, signed so that positive is better, with its test."""

    group: Group
    test: Welch
    p_holm: float

    @property
    def verdict(self) -> str:
        return BETTER if self.p_holm < ALPHA else NOT_SHOWN


def baseline_group(groups: list[Group], name: str) -> Group:
    """The one group whose runs lie in the sweep folder `name`; UserError in one line otherwise."""
    found = [group for group in groups if dict(group.setting).get(SWEEP) == name]
    if len(found) != 1:
        folders = sorted({dict(group.setting).get(SWEEP, ".") for group in groups})
        what = "no group" if not found else f"{len(found)} settings"
        raise UserError(f"--baseline {name}: {what} in that folder (the folders: {', '.join(folders)})")
    if found[0].summary.n < 2:
        raise UserError(f"--baseline {name}: {found[0].count} runs usable; a test needs >= 2")
    return found[0]


def against_baseline(groups: list[Group], name: str, metric: str) -> list[AgainstBaseline]:
    """Every other group with >= 2 usable runs against the baseline, best first."""
    base = baseline_group(groups, name)
    candidates = [group for group in groups if group is not base and group.summary.n >= 2]
    floor = resolution(metric)
    tests = []
    for group in candidates:
        better, worse = (base, group) if lower_is_better(metric) else (group, base)
        tests.append(welch(better.summary.values, worse.summary.values, floor))
    corrected = holm([test.p_greater for test in tests])
    rows = [AgainstBaseline(g, t, p) for g, t, p in zip(candidates, tests, corrected, strict=True)]
    return sorted(rows, key=lambda row: -row.test.difference)


def baseline_text(rows: list[AgainstBaseline], name: str, metric: str) -> str:
    """The rows as a table (a candidate by its folder), and the line that says how they were tested."""
    direction = "lower" if lower_is_better(metric) else "higher"
    header = ["folder", "runs", f"{metric} (mean ± sd)", "better by [95% interval]", "p (one-sided)"]
    table = [
        [
            dict(row.group.setting).get(SWEEP, "."),
            row.group.count,
            row.group.summary.text(),
            row.test.interval_text(),
            f"{row.test.p_greater:.2g}",
            f"{row.p_holm:.2g}",
            row.verdict,
        ]
        for row in rows
    ]
    return (
        f"against the baseline {name} by {metric} ({direction} is better): Welch's t-test, one-sided, "
        f"Holm-corrected over {len(rows)} candidate{'s' * (len(rows) != 1)}; '{BETTER}' at p < {ALPHA}\n"
        + as_text([*header, "p (Holm)", "verdict"], table)
    )
