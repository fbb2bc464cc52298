"""Say that a long stage of a run starts and how long it took: a user waiting on it knows what is going on."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tx_keras.training.clock import clock

_LOG = logging.getLogger("tx_keras.run")


@contextmanager
def stage(what: str) -> Iterator[None]:
    """Logs `<what> ...` before and `<what>: done in m:ss` after (the log file has both with times)."""
    _LOG.info("%s ...", what)
    started = time.perf_counter()
    yield
    _LOG.info("%s: done in %s", what, clock(time.perf_counter() - started))
