"""The run's train.log handler: a disk that stops writing (full, over quota, gone) must not print
Python's `--- Logging error ---` tracebacks over the one line that says so."""

from __future__ import annotations

import logging
import sys

from tx_keras.run_folder.disk_fault import disk_fault


class LogFile(logging.FileHandler):
    """`logging.FileHandler` that drops a record it cannot write because of a disk fault (`disk_fault`).

    A full disk surfaces where the run next writes: a checkpoint, an event file, or this log. The run ends
    with `tx-train: error: no space left on device ...`; the traceback it logs for train.log on the way
    cannot land there, and Python's default would print that failure, traceback and all, on stderr (how
    much did depended on whether the log's last page had room). Any other error is reported as usual.
    """

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        error = sys.exc_info()[1]
        if error is not None and disk_fault(error) is not None:
            return
        super().handleError(record)
