"""tests/ahead.py, the setups started ahead: each job runs once, in the order given, in the background or
in the fixture that needs it first; a failure reaches that fixture; a pause holds the queue."""

import os
import sys
import threading
import time

import pytest

from tests import ahead as module


@pytest.fixture
def jobs(monkeypatch):
    """Fresh registered jobs: name -> a job that records its run and returns its folder's name."""
    ran: list[str] = []
    gate = threading.Event()
    registered: dict = {}
    monkeypatch.setattr(module, "JOBS", registered)

    def setup(name):
        def run(folder):
            if name == "gated":
                gate.wait(10)
            if name == "broken":
                raise ValueError("no corpus")
            ran.append(name)
            return folder.name

        return run

    for name in ("first", "second", "gated", "broken"):
        module.job(name)(setup(name))
    return ran, gate


def _wait_until(condition, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def _folders(tmp_path):
    return lambda name: (tmp_path / name).resolve()


def test_jobs_run_once_in_order_in_the_background(tmp_path, jobs):
    ran, _ = jobs
    queue = module.Ahead(_folders(tmp_path), ["second", "first", "unknown"], threads=1)
    _wait_until(lambda: len(ran) == 2)  # both run before anyone asks
    queue.close()
    assert ran == ["second", "first"]
    assert queue.result("first") == "first" and queue.result("second") == "second"
    assert ran == ["second", "first"]  # asking again runs nothing


def test_a_job_not_reached_yet_runs_in_the_fixture_that_asks(tmp_path, jobs):
    ran, gate = jobs
    queue = module.Ahead(_folders(tmp_path), ["gated", "first"], threads=1)  # the thread waits in "gated"
    assert queue.result("first") == "first" and ran == ["first"]  # run here, not behind "gated"
    assert queue.result("second") == "second"  # never queued: run here too
    gate.set()
    assert queue.result("gated") == "gated"  # waited for
    queue.close()
    assert ran == ["first", "second", "gated"]


def test_a_failure_is_raised_where_the_value_is_asked_for(tmp_path, jobs):
    queue = module.Ahead(_folders(tmp_path), ["broken"])
    queue.close()
    with pytest.raises(ValueError, match="no corpus"):
        queue.result("broken")


def test_a_pause_holds_the_queue_until_it_ends(tmp_path, jobs):
    ran, gate = jobs
    queue = module.Ahead(_folders(tmp_path), ["gated", "first"], threads=1)  # the thread waits in "gated"
    with queue.paused():
        gate.set()
        assert queue.result("gated") == "gated"  # the running job ends
        time.sleep(0.3)  # time enough for the thread to take the next job, were it allowed to
        assert ran == ["gated"]
    _wait_until(lambda: len(ran) == 2)  # the thread takes "first" once the pause ends
    queue.close()
    assert ran == ["gated", "first"]


def test_close_starts_no_more_jobs(tmp_path, jobs):
    ran, gate = jobs
    queue = module.Ahead(_folders(tmp_path), ["gated", "first"], threads=1)
    gate.set()
    with queue.paused():
        queue.result("gated")
        queue.close()  # waits for the thread, which starts nothing more
    assert ran == ["gated"]


def test_two_threads_run_two_jobs_at_once_and_each_once(tmp_path, jobs):
    """The default: while one thread waits in "gated", the other runs the rest of the queue."""
    ran, gate = jobs
    queue = module.Ahead(_folders(tmp_path), ["gated", "first", "second"])
    _wait_until(lambda: len(ran) == 2)
    assert ran == ["first", "second"]  # not behind "gated"
    gate.set()
    queue.close()
    assert ran == ["first", "second", "gated"]
    assert [queue.result(name) for name in ("gated", "first", "second")] == ["gated", "first", "second"]


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own niceness is Linux's")
def test_a_job_needs_another_and_the_background_runs_below_the_foreground(tmp_path, jobs):
    """`needs` gives a job another job's value from its own queue; the background thread (and so any
    process it starts) is niced above the foreground."""
    seen = {}

    def needing(folder):
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, 0)  # Linux: this thread's
        return module.needs("first")

    module.job("needing")(needing)
    queue = module.Ahead(_folders(tmp_path), ["needing"], threads=1)
    _wait_until(lambda: "nice" in seen)  # started by the background thread, not by result() below
    assert queue.result("needing") == "first"
    queue.close()
    assert jobs[0] == ["first"]
    assert seen["nice"] > os.getpriority(os.PRIO_PROCESS, 0)  # the foreground wins a contended core
