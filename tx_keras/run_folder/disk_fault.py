"""A run folder the disk stops writing (full, over quota, read-only, gone) as one line saying what to do.

Python reports such a fault as `OSError` with its errno; TensorFlow's file writers (event files, the
SavedModel) as an `OpError` whose message ends in the C library's text for that errno (e.g. the summary
writer's `ResourceExhaustedError: .../events.out.tfevents...; No space left on device`). Either way the
run cannot go on, and every file it wrote before is still whole (atomic writes; event files are cut back
to the checkpoint on resume), so the line tells the user to fix the disk and resume.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path

DISK_FAULT_EXIT_CODE = 74  # EX_IOERR of sysexits.h: an input/output error

_WHAT = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOENT: "the run folder vanished",
}
_FIX = {
    errno.ENOSPC: "free space",
    errno.EDQUOT: "free space or raise the quota",
    errno.EROFS: "make the file system writable",
    errno.EACCES: "make the folder writable",
    errno.EPERM: "make the folder writable",
    errno.ENOENT: "put the run folder back (or start afresh in a new one)",
}
# TensorFlow's messages: "{{function_node ...}} <path>; <strerror>", or without the node "<path>; <strerror>".
_STRERRORS = "(" + "|".join(re.escape(os.strerror(number)) for number in _WHAT) + ")"
_TF_MESSAGES = (re.compile(r"\}\} ([^;\n]+); " + _STRERRORS), re.compile(r"(\S+); " + _STRERRORS))


def _errno_of(error: BaseException) -> tuple[int, str | None] | None:
    """The errno and the file being written, when `error` itself is an OS error of a kind in _WHAT."""
    if isinstance(error, OSError) and error.errno in _WHAT:
        return error.errno, None if error.filename is None else str(error.filename)
    if type(error).__module__.startswith("tensorflow"):
        found = next(filter(None, (pattern.search(str(error)) for pattern in _TF_MESSAGES)), None)
        if found:
            return next(n for n in _WHAT if os.strerror(n) == found.group(2)), found.group(1).strip()
    return None


def _vanished(path: str | None, run_dir: Path | None) -> bool:
    """A missing file is a disk fault only when it is the run folder that went away under the run (a
    missing input file is the user's or a bug)."""
    if path is None or run_dir is None:
        return False
    run_dir = Path(run_dir).absolute()
    return not run_dir.exists() and run_dir in Path(path).absolute().parents


def disk_fault(error: BaseException, run_dir: Path | None = None) -> tuple[str, str] | None:
    """(what went wrong while writing which file, what to do) when `error`, or an error it was raised
    from or while handling, is a disk fault; None for anything else. A vanished folder counts only for
    files of `run_dir`."""
    seen: set[int] = set()
    chain: list[BaseException] = []
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    for link in reversed(chain):  # the first fault: later ones are often its consequences
        found = _errno_of(link)
        if found is not None and (found[0] != errno.ENOENT or _vanished(found[1], run_dir)):
            number, path = found
            where = f" while writing {path}" if path else ""
            return f"{_WHAT[number]}{where}", _FIX[number]
    return None


def exit_on_disk_fault(error: BaseException, then: str, run_dir: Path | None = None) -> None:
    """tx-train's one line and exit status for a disk fault, wherever in a run it is met: print
    `tx-train: error: <what>; <fix>, then <then>` and exit DISK_FAULT_EXIT_CODE when `error` is one;
    return for anything else, which the caller re-raises."""
    fault = disk_fault(error, run_dir)
    if fault is None:
        return
    what, fix = fault
    print(f"tx-train: error: {what}; {fix}, then {then}", file=sys.stderr)
    sys.exit(DISK_FAULT_EXIT_CODE)
