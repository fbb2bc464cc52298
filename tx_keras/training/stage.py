"""Say that a long stage of a run starts, that it is still running, and how long it took."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tx_keras.training.clock import clock

_LOG = logging.getLogger("tx_keras.run")
HEARTBEAT_S = 30.0  # a stage that runs longer says so this often (a log shows a sign of life each minute)


@contextmanager
def stage(what: str, heartbeat_s: float = HEARTBEAT_S) -> Iterator[None]:
    """Logs `<what> ...` before, `<what>: still running (m:ss)` every `heartbeat_s` seconds while it
    runs (decoding a large test split with beam search takes minutes), and `<what>: done in m:ss` after."""
    _LOG.info("%s ...", what)
    started = time.perf_counter()
    finished = threading.Event()

    def heartbeat() -> None:
        while not finished.wait(heartbeat_s):
            _LOG.info("%s: still running (%s)", what, clock(time.perf_counter() - started))

    beating = threading.Thread(target=heartbeat, name="stage-heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        finished.set()
        beating.join()
    _LOG.info("%s: done in %s", what, clock(time.perf_counter() - started))
