"""A module-level function run over a list of arguments in fresh Python processes (`python -m` this module),
results in order. Unlike multiprocessing's spawn, nothing of the host's `__main__` is imported again, so a
caller's script needs no `if __name__ == "__main__"` guard, and unlike fork no thread state (TensorFlow's) is
inherited: the host process is left as it was."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tx_keras

_POLL_S = 0.05


def map_in_processes(
    function: Callable[[Any], Any], arguments: list[Any], workers: int, folder: Path
) -> Iterator[Any]:
    """`function(argument)` for each argument, yielded in order, computed by `workers` processes (worker w
    takes arguments w, w + workers, ...), which start at once: the caller may work meanwhile and read the
    results after. `folder` holds the jobs and results, one pickle file each, and is removed at the end.
    An exception in a worker is raised here; a worker that dies without a result raises RuntimeError."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ)
    package_root = str(Path(tx_keras.__file__).resolve().parents[1])  # found the same way as here
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
    processes = []
    for worker in range(min(workers, len(arguments))):
        job = folder / f"job-{worker}.pkl"
        indices = list(range(worker, len(arguments), workers))
        job.write_bytes(pickle.dumps((function, [(i, arguments[i]) for i in indices], str(folder))))
        command = [sys.executable, "-m", __name__, str(job)]
        processes.append(subprocess.Popen(command, env=environment, stderr=subprocess.PIPE))
    return _results(folder, processes, len(arguments))


def _results(folder: Path, processes: list[subprocess.Popen], count: int) -> Iterator[Any]:
    try:
        for index in range(count):
            yield _result(folder / f"result-{index}.pkl", processes[index % len(processes)])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()
        shutil.rmtree(folder, ignore_errors=True)


def _result(path: Path, process: subprocess.Popen) -> Any:
    while not path.exists():
        if process.poll() is not None and not path.exists():
            error = process.stderr.read().decode(errors="replace").strip().splitlines()[-1:]
            raise RuntimeError(f"a worker process ended ({process.returncode}) without a result: {error}")
        time.sleep(_POLL_S)
    outcome, value = pickle.loads(path.read_bytes())
    path.unlink()
    if outcome == "error":
        raise value
    return value


def _work(job: Path) -> None:
    function, arguments, folder = pickle.loads(job.read_bytes())
    for index, argument in arguments:
        try:
            result = ("value", function(argument))
        except Exception as error:  # handed to the caller, which raises it
            result = ("error", error)
        done = Path(folder) / f"result-{index}.pkl"
        partial = done.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(result))
        partial.rename(done)  # whole or absent: the caller never reads half a result


if __name__ == "__main__":
    _work(Path(sys.argv[1]))
