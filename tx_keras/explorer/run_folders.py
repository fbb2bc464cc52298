"""From a TensorBoard run name to the tx-train run folder behind it, and to that run's SavedModel."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from tx_keras.export.saved_model_loader import EXPORT_DIR, SAVED_MODEL_DIR
from tx_keras.run_folder.run_marker import MARKER_NAME
from tx_keras.run_folder.summary import SUMMARY_NAME, summary_or_none

RUN_MARKERS = (SUMMARY_NAME, MARKER_NAME)  # what tx-train writes at the top of every run folder


def run_folder(logdir: Path, run: str) -> Path | None:
    """The run folder holding TensorBoard run `run` (`.`, `heads_1/attention`, ...): the run's own folder or
    the nearest parent with a run marker, never above `logdir`; None when it is gone or not a tx-train run."""
    logdir = logdir.resolve()
    folder = (logdir / run).resolve()
    if folder != logdir and logdir not in folder.parents:
        return None
    while True:
        if any((folder / marker).is_file() for marker in RUN_MARKERS):
            return folder
        if folder == logdir:
            return None
        folder = folder.parent


def run_label(logdir: Path, name: str) -> str:
    """What the run menus show for TensorBoard run or run folder `name`: the name itself, except for the
    logdir's own folder, which TensorBoard calls `.` (`tx-board RUN_FOLDER`): that one is called after
    the folder, as it is when the logdir is the sweep or outputs folder above it."""
    return logdir.resolve().name if name in (".", "") else name


def saved_model(folder: Path) -> Path | None:
    """The run's SavedModel: summary.json's `export` path (only inside `folder`: a summary.json must not
    point the server at any SavedModel on the disk), else the default `export/saved_model`; None when the
    run has none (still training, export disabled, or its files were deleted)."""
    candidates = [folder / EXPORT_DIR / SAVED_MODEL_DIR]
    try:
        stamp = (folder / SUMMARY_NAME).stat().st_mtime_ns
    except OSError:
        stamp = None
    exported = _exported(folder, stamp) if stamp is not None else None
    if isinstance(exported, str) and _inside(folder, exported):
        candidates.insert(0, folder / exported)
    for candidate in candidates:
        if (candidate / "saved_model.pb").is_file():
            return candidate
    return None


def _inside(folder: Path, relative: str) -> bool:
    """Whether `relative` names a path inside `folder`; False too for one the OS refuses to look up (a NUL
    byte, a name too long), which a damaged summary.json may hold."""
    try:
        return folder.resolve() in (folder / relative).resolve().parents
    except (OSError, ValueError):
        return False


@lru_cache(maxsize=1024)
def _exported(folder: Path, stamp: int) -> object:
    """summary.json's `export` entry, read once per version of the file: the Attention tab polls every
    run's folder every 15 s, and a sweep has hundreds; a stat per poll is cheap, a JSON parse is not."""
    return (summary_or_none(folder) or {}).get("export")
