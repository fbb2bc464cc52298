"""SIGTERM and SIGINT as a request to stop that loses no work: preemption, `docker stop`, a scheduler's
time limit, Ctrl-C.

While training runs, the first signal only notes the request: the mid-epoch checkpoint callback
(training/callbacks/mid_epoch_checkpoint.py) writes a checkpoint at the next step boundary and raises
`Interrupted`. Outside training (data, evaluation, export) there is nothing half-done worth saving, so the
handler raises `Interrupted` at once; the last checkpoint stays. A second signal ends the process at once,
with the shell's status for a death by that signal.

`Interrupted` is a BaseException, as KeyboardInterrupt is: a run's `except Exception` (which records a
failure) and Hydra's per-job handler let it through, so it ends a sweep too, and `tx-train` turns it into
one line and INTERRUPTED_EXIT_CODE.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType, TracebackType

INTERRUPTED_EXIT_CODE = 75  # EX_TEMPFAIL of sysexits.h: try again later (the same command resumes)
_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_active: StopSignals | None = None


class Interrupted(BaseException):
    """Training was stopped by a signal; `detail` says where and what was saved."""

    def __init__(self, signal_number: int, detail: str):
        super().__init__(f"{signal.Signals(signal_number).name} {detail}")
        self.signal_name = signal.Signals(signal_number).name
        self.detail = detail


class StopSignals:
    """Installs the handlers for the `with` block (main thread only: elsewhere Python cannot, and the
    block runs unguarded). `received` is the first signal's number; `training` is set by the callback
    while it can stop at a step boundary."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.training = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        global _active
        if threading.current_thread() is threading.main_thread():
            self._previous = {number: signal.signal(number, self._handle) for number in _SIGNALS}
            _active = self
        return self

    def __exit__(self, kind: type | None, value: BaseException | None, trace: TracebackType | None) -> None:
        global _active
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous = {}
        if _active is self:
            _active = None

    def _handle(self, number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        if self.received is not None:
            os.write(2, f"tx-train: second {name}: stopping at once, without a checkpoint\n".encode())
            os._exit(128 + number)
        self.received = number
        if not self.training:
            raise Interrupted(number, "outside training; the last checkpoint stays")


def active() -> StopSignals | None:
    """The handlers of the run in progress in this process, None when there are none (a library call)."""
    return _active
