"""The runs of a sweep folder as records: overrides, status, final metrics, size, wall time."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tx_keras.run_folder.overrides import override_values, read_overrides
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.run_folder.summary import SUMMARY_NAME, summary_or_none

# Overrides that select the sweep itself (its name, its seed count) rather than vary between its jobs.
_NOT_SWEPT = ("sweep=", "seeds=", "hydra.")


@dataclass(frozen=True)
class RunRecord:
    """One job folder. `status` is completed, diverged or failed from summary.json, or `unfinished`
    while the job is running, was killed, or has not written its summary yet."""

    name: str
    path: Path
    overrides: dict[str, str]
    status: str
    reason: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    parameters: int | None = None
    wall_time_s: float | None = None


def _job_number(path: Path) -> tuple[int, str]:
    head = path.name.split("_", 1)[0]
    return (int(head), path.name) if head.isdigit() else (1 << 30, path.name)


def _overrides(run_dir: Path) -> dict[str, str]:
    overrides = read_overrides(run_dir) or []
    return override_values([item for item in overrides if not item.startswith(_NOT_SWEPT)])


def read_run(run_dir: Path, name: str | None = None) -> RunRecord:
    """A record for one job folder, whatever state it is in, named `name` (default: the folder's name).

    A run being written is read as it stands: summary.json is whole or absent (atomic writes), and an
    overrides file Hydra is still writing (or was killed writing) leaves an unfinished run's overrides
    empty; only a finished run's damaged overrides are an error."""
    name = name or run_dir.name
    summary = summary_or_none(run_dir)
    try:
        overrides = _overrides(run_dir)
    except RunFolderError:
        if summary is not None:
            raise
        overrides = {}
    if summary is None:
        return RunRecord(name, run_dir, overrides, "unfinished")
    return RunRecord(
        name=name,
        path=run_dir,
        overrides=overrides,
        status=summary.get("status", "unfinished"),
        reason=summary.get("reason", ""),
        metrics={key: float(value) for key, value in summary.get("metrics", {}).items()},
        parameters=summary.get("parameters"),
        wall_time_s=summary.get("wall_time_s"),
    )


def _is_run(folder: Path) -> bool:
    return (folder / ".hydra").is_dir() or (folder / SUMMARY_NAME).exists()


def _nested_runs(folder: Path) -> list[Path]:
    """The run folders anywhere under `folder` (not inside a run), each folder's in job order."""
    children = [child for child in folder.iterdir() if child.is_dir() and not child.name.startswith(".")]
    found: list[Path] = []
    for child in sorted(children, key=_job_number):
        found += [child] if _is_run(child) else _nested_runs(child)
    return found


def collect_runs(sweep_dir: Path, nested: bool = False) -> list[RunRecord]:
    """Every job folder of a sweep (those with Hydra's `.hydra/` or a summary), in job order.

    `nested`: runs at any depth too, named by their path under `sweep_dir` (`outputs/` holds single runs
    as `<date>/<time>/` and sweeps as `sweeps/<name>/<date_time>/<job>/`)."""
    if nested:
        return [
            read_run(folder, folder.relative_to(sweep_dir).as_posix()) for folder in _nested_runs(sweep_dir)
        ]
    folders = [child for child in sweep_dir.iterdir() if child.is_dir() and _is_run(child)]
    return [read_run(folder) for folder in sorted(folders, key=_job_number)]
