"""The end of a sweep: one line per job that did not complete, a count by status, and the exit code."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

# Exit code of `tx-train` when a sweep ran to the end but some of its jobs failed.
FAILED_JOBS_EXIT_CODE = 3


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
        for run in runs:
            if run.status != "completed":
                print(f"tx-train: {run.status:>10}  {run.name}  {run.reason}", file=sys.stderr)
        summary = ", ".join(f"{counts[status]} {status}" for status in sorted(counts)) or "no jobs"
        print(f"tx-train: sweep {sweep_dir}: {len(runs)} jobs: {summary}", file=sys.stderr)
        type(self).exit_code = FAILED_JOBS_EXIT_CODE if counts["failed"] else 0
