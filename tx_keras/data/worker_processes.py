"""A module-level function run over a list of arguments in fresh Python processes (`python -m` this module),
results in order. Unlike multiprocessing's spawn, nothing of the host's `__main__` is imported again, so a
caller's script needs no `if __name__ == "__main__"` guard, and unlike fork no thread state (TensorFlow's) is
inherited: the host process is left as it was. Jobs and results travel through pipes, never files, so a
full disk reaches the caller as the worker's own OSError (errno kept), not as a result that could not be
written."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tx_keras


def map_in_processes(function: Callable[[Any], Any], arguments: list[Any], workers: int) -> Iterator[Any]:
    """`function(argument)` for each argument, yielded in order, computed by `workers` processes (worker w
    takes arguments w, w + workers, ...), which start at once: the caller may work meanwhile and read the
    results after. An exception in a worker is raised here; a worker that dies without a result raises
    RuntimeError."""
    environment = dict(os.environ)
    package_root = str(Path(tx_keras.__file__).resolve().parents[1])  # found the same way as here
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
    processes = []
    for worker in range(min(workers, len(arguments))):
        job = (function, [(i, arguments[i]) for i in range(worker, len(arguments), workers)])
        process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # its failures come back as results; library chatter is not wanted
        )
        processes.append(process)
        with process.stdin:
            pickle.dump(job, process.stdin)
    return _results(processes, len(arguments))


def _results(processes: list[subprocess.Popen], count: int) -> Iterator[Any]:
    try:
        for index in range(count):
            process = processes[index % len(processes)]
            try:
                outcome, value = pickle.load(process.stdout)
            except EOFError:
                code = process.wait()
                raise RuntimeError(f"a worker process ended ({code}) without a result") from None
            if outcome == "error":
                raise value
            yield value
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.stdout.close()
            process.wait()


def _work() -> None:
    results = os.fdopen(os.dup(1), "wb")  # the pipe to the caller, kept for results only:
    os.dup2(2, 1)  # anything a library prints goes where stderr goes, not into the results
    try:
        function, arguments = pickle.load(sys.stdin.buffer)
    except Exception as error:  # a job that cannot be read (e.g. its module fails to import): said once
        pickle.dump(("error", error), results)
        return
    for _, argument in arguments:
        try:
            result = ("value", function(argument))
        except Exception as error:  # handed to the caller, which raises it
            result = ("error", error)
        pickle.dump(result, results)
        results.flush()


if __name__ == "__main__":
    _work()
