"""Say that a long stage of a run starts, that it is still running, and how long it took."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_LOG = logging.getLogger("tx_keras.run")
HEARTBEAT_S = 30.0  # a stage that runs longer says so this often (a log shows a sign of life each minute)


def clock(seconds: float) -> str:
    """90 -> `1:30`, 3700 -> `1:01:40`."""
    minutes, secs = divmod(int(round(max(seconds, 0.0))), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class WallTimer:
    """The real clock a stage reads and waits on; a test passes its own, so the heartbeats it counts do
    not depend on how busy the machine is."""

    def now(self) -> float:
        return time.perf_counter()

    def wait(self, finished: threading.Event, seconds: float) -> bool:
        """Until the stage finishes (True) or `seconds` pass (False)."""
        return finished.wait(seconds)


@contextmanager
def stage(what: str, heartbeat_s: float = HEARTBEAT_S, timer: WallTimer | None = None) -> Iterator[None]:
    """Logs `<what> ...` before, `<what>: still running (m:ss)` every `heartbeat_s` seconds while it
    runs (decoding a large test split with beam search takes minutes), and `<what>: done in m:ss` after."""
    timer = timer or WallTimer()
    _LOG.info("%s ...", what)
    started = timer.now()
    finished = threading.Event()

    def heartbeat() -> None:
        while not timer.wait(finished, heartbeat_s):
            _LOG.info("%s: still running (%s)", what, clock(timer.now() - started))

    beating = threading.Thread(target=heartbeat, name="stage-heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        finished.set()
        beating.join()
    _LOG.info("%s: done in %s", what, clock(timer.now() - started))
