"""tx-train's one line and exit status for a disk fault, wherever in a run it is met."""

from __future__ import annotations

import sys
from pathlib import Path

from tx_keras.run_folder.disk_fault import DISK_FAULT_EXIT_CODE, disk_fault


def exit_on_disk_fault(error: BaseException, then: str, run_dir: Path | None = None) -> None:
    """Print `tx-train: error: <what>; <fix>, then <then>` and exit when `error` is a disk fault
    (run_folder/disk_fault.py); return for anything else, which the caller re-raises."""
    fault = disk_fault(error, run_dir)
    if fault is None:
        return
    what, fix = fault
    print(f"tx-train: error: {what}; {fix}, then {then}", file=sys.stderr)
    sys.exit(DISK_FAULT_EXIT_CODE)
