"""Setups started ahead: the real tx-train runs that shared fixtures read, trained on two background threads
from the session's first test on, while the tests go on beside them.

Why: pytest runs one test at a time, so on CI's 2 cores one core idles through most of the suite; a setup
that only waits for tx-train processes can use it. Two threads, not one: a tiny run is mostly one Python
thread (tracing, callbacks), and with one background job the suite kept 1.1 of 2 cores busy on the Zen 1
EPYC (29:49 for the default run, 2026-12-02). Each job runs once, in the order the tests first need
them; a fixture that needs its job before the thread got to it runs it itself, in the foreground as before,
so test order and selection (-k, one file) change nothing but the waiting. A job's failure is raised in
the fixture that asks for it, as if the fixture had run it. A job may ask for another job's value
(`needs`). The background threads run at a lower priority (nice, which the processes they start
inherit), so the tests in the foreground, which the suite's end waits for, keep a core while the jobs take
what is left.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_THREADS = 2
_NICE = 5  # the background threads' niceness above the foreground's
_running = threading.local()  # .queue: the Ahead whose job this thread is running
# fixture name -> its setup, given a fresh folder of its own; registered at import (collection) time
JOBS: dict[str, Callable[[Path], object]] = {}


def job(name: str) -> Callable:
    """Register `setup(folder) -> value` as what fixture `name` returns, to be started ahead."""

    def register(setup: Callable[[Path], object]) -> Callable[[Path], object]:
        JOBS[name] = setup
        return setup

    return register


class Ahead:
    """The jobs of `names` (in that order) run on `threads` background threads; `result(name)` waits."""

    def __init__(self, folder: Callable[[str], Path], names: list[str], threads: int = _THREADS):
        self._folder = folder
        self._lock = threading.Lock()
        self._done: dict[str, threading.Event] = {}
        self._values: dict[str, tuple[bool, object]] = {}
        self._go = threading.Event()  # cleared while a test module asks for a quiet machine
        self._go.set()
        self._closing = False
        self.timings: list[tuple[str, str, float]] = []  # (job, where it ran, wall seconds) as they end
        queued = [(name, folder(name)) for name in names if name in JOBS]  # folders made here, not in threads
        self._threads = [
            threading.Thread(target=self._run_queue, args=(queued,), daemon=True) for _ in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def _claim(self, name: str) -> bool:
        """True for the one caller that is to run `name`'s job."""
        with self._lock:
            if name in self._done:
                return False
            self._done[name] = threading.Event()
            return True

    def _run(self, name: str, folder: Path) -> None:
        outer = getattr(_running, "queue", None)
        _running.queue = self  # what `needs` asks, inside the job
        started = time.monotonic()
        where = "ahead" if threading.current_thread() in self._threads else "in its fixture"
        try:
            self._values[name] = (True, JOBS[name](folder))
        except BaseException as error:  # noqa: BLE001 - handed to the fixture that asks for it
            self._values[name] = (False, error)
        finally:
            self.timings.append((name, where, time.monotonic() - started))
            _running.queue = outer
            self._done[name].set()

    def _run_queue(self, queued: list[tuple[str, Path]]) -> None:
        """Each thread walks the whole queue; the first to claim a job runs it."""
        if sys.platform == "linux":  # where a niceness is a thread's own (and its child processes')
            os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + _NICE)
        for name, folder in queued:
            self._go.wait()
            if self._closing:
                return
            if self._claim(name):
                self._run(name, folder)

    def result(self, name: str):
        """`name`'s value: waited for if its job runs in the background, else run here and now."""
        if self._claim(name):
            self._run(name, self._folder(name))
        self._done[name].wait()
        ok, value = self._values[name]
        if not ok:
            raise value
        return value

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No job starts meanwhile (those already running end): for tests that time a browser's answers."""
        self._go.clear()
        try:
            yield
        finally:
            self._go.set()

    def close(self) -> None:
        """Start no more jobs and wait for the running ones (their processes end with them)."""
        self._closing = True
        self._go.set()
        for thread in self._threads:
            thread.join()


def ahead_fixture(setup: Callable[[Path], object]):
    """`setup(folder)` as a session fixture of its own name, computed ahead: for a test whose cost is a
    fresh process (a CLI, a client), so the process runs in the background and the test only reads it."""
    name = setup.__name__
    JOBS[name] = setup

    @pytest.fixture(scope="session", name=name)
    def fixture(ahead):
        return ahead.result(name)

    fixture.__doc__ = setup.__doc__
    return fixture


def needs(name: str):
    """Inside a job: the value of job `name` from the same queue, waited for or run here (jobs take only a
    folder)."""
    return _running.queue.result(name)
