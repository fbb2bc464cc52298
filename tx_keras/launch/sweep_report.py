"""The end of a sweep: a table of its jobs (status, objective), the jobs grouped by setting when a setting
ran with several seeds (mean ± sd, interval, Welch against the best), a count by status, what to run next,
and the exit code."""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

# Exit code of `tx-train` when a sweep ran to the end but some of its jobs failed.
FAILED_JOBS_EXIT_CODE = 3
_MAX_ROWS = 40  # a longer sweep's table is tx-compare's job


def _print_groups(runs: list, objective: str) -> None:
    """The grouped table (tx_keras/comparison/groups.py), when some setting ran with more than one seed."""
    from tx_keras.comparison.group_table import group_rows
    from tx_keras.comparison.groups import compare_groups
    from tx_keras.comparison.table import as_text

    groups = compare_groups(runs, objective)
    if all(len(group.runs) < 2 for group in groups):
        return
    header, rows = group_rows(groups, objective, [])
    # narrower than tx-compare's table: the difference's interval, the corrected p and the verdict say enough
    keep = [i for i, name in enumerate(header) if name != "Hedges g"]
    table = as_text([header[i] for i in keep], [[row[i] for i in keep] for row in rows[:_MAX_ROWS]])
    print(
        f"tx-train: by setting ({len(groups)} groups; Welch on every pair, Holm-corrected):",
        file=sys.stderr,
    )
    for line in table.splitlines():
        print(f"tx-train: {line}", file=sys.stderr)


class SweepReport(Callback):
    """Hydra callback (conf/hydra/default.yaml): reads the sweep folder back once every job has run.

    Failed jobs were recorded and skipped by the job runner, so the sweep always reaches this point;
    `exit_code` tells `tx-train` to exit with FAILED_JOBS_EXIT_CODE when any job failed. Diverged jobs
    are a result (a learning rate too high), counted but not an error.
    """

    exit_code: ClassVar[int] = 0

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from tx_keras.comparison import collect_runs

        sweep_dir = Path(config.hydra.sweep.dir)
        runs = collect_runs(sweep_dir) if sweep_dir.is_dir() else []
        counts = Counter(run.status for run in runs)
        objective = config.get("trainer", {}).get("objective", "validation_exact_match")
        if runs:
            print(f"tx-train: {'status':>10}  {objective:>24}  job", file=sys.stderr)
        for run in runs[:_MAX_ROWS]:
            value = run.metrics.get(objective)
            shown = f"{value:.4f}" if value is not None else "-"
            reason = f"  {run.reason}" if run.status != "completed" and run.reason else ""
            print(f"tx-train: {run.status:>10}  {shown:>24}  {run.name}{reason}", file=sys.stderr)
        if len(runs) > _MAX_ROWS:
            print(f"tx-train: ... {len(runs) - _MAX_ROWS} more jobs", file=sys.stderr)
        _print_groups(runs, objective)
        summary = ", ".join(f"{counts[status]} {status}" for status in sorted(counts)) or "no jobs"
        print(f"tx-train: sweep {sweep_dir}: {len(runs)} jobs: {summary}", file=sys.stderr)
        if runs:
            folder = shlex.quote(str(sweep_dir))
            print(f"tx-train: next: tx-compare {folder}   |   tx-board {folder}", file=sys.stderr)
        type(self).exit_code = FAILED_JOBS_EXIT_CODE if counts["failed"] else 0
