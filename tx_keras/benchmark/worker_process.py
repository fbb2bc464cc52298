"""A part of tx-bench timed in a process of its own (the real path's rows, the backends, the kernel
libraries' peaks): started like the command it stands for, answering its parent with one prefixed JSON
line. (The decoding workers answer a line per timed call instead: decoding_process.py.)

Protocol: the worker module gets its spec as argv[1] (JSON) and prints its answer as one line
`PREFIX <json>` on stdout (other stdout lines are ignored); it inherits the parent's environment, so
the allocator (`TX_KERAS_ALLOCATOR`) and TensorFlow's switches (`--onednn`) are the same.
"""

from __future__ import annotations

import json
import subprocess
import sys


class WorkerFailed(RuntimeError):
    """A worker process ended without its answer (these one-shot workers, backend_race.py's, the kernel
    libraries' peak processes, and the decoding workers): tx-bench prints it as its one-line error."""


def start_worker() -> None:
    """In the worker, first: TensorFlow as the Keras backend, the commands' allocator, TensorFlow started
    with its start-up noise off stderr (its runtime not yet: thread pools may still be chosen)."""
    from tx_keras.runtime import allocator
    from tx_keras.runtime.keras_backend import select_backend

    select_backend("tensorflow")  # before Keras's first import
    allocator.configure_allocator()  # as the commands' processes
    from tx_keras.runtime.quiet_startup import start_tensorflow

    start_tensorflow()


def answer(prefix: str, value: dict) -> None:
    """In the worker, last: the answer line."""
    print(prefix + json.dumps(value), flush=True)


def worker_answer(module: str, spec: dict, prefix: str) -> dict:
    """Run `python -m module SPEC` and return its answer; WorkerFailed names the worker's last stderr line
    when it ends without one."""
    done = subprocess.run(
        [sys.executable, "-m", module, json.dumps(spec)], capture_output=True, text=True, check=False
    )
    answers = [line[len(prefix) :] for line in done.stdout.splitlines() if line.startswith(prefix)]
    if done.returncode != 0 or not answers:
        raise worker_failed(module, done.returncode, done.stderr)
    return json.loads(answers[-1])


def worker_failed(module: str, code: int, stderr: str) -> WorkerFailed:
    """The one-line error of worker `module` that ended with `code`: its last stderr line."""
    last = (stderr.strip().splitlines() or ["(no output)"])[-1]
    return WorkerFailed(f"the {module.rsplit('.', 1)[-1]} ended with code {code}: {last}")
