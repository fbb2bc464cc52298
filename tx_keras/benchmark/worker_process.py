"""tx-bench's worker processes: one skeleton and one protocol for every part it times in a process of its
own, where the process is part of what is measured (TensorFlow sizes its thread pools and picks its kernel
library once, when it starts; Keras fixes its backend per process; a user decodes in a process whose heap
did not just train three models): the real path's rows (real_path.py), the decoding calls
(decoding_speed.py), each backend's training rows (backend_race.py), each kernel library's matmul peaks
(library_peaks.py).

Protocol: the parent (`WorkerProcess`) starts `python -m tx_keras.benchmark.worker_process
MODULE:FUNCTION SPEC`. The worker starts as the command it stands for (Keras on the spec's `backend`,
TensorFlow by default; the commands' allocator; TensorFlow's start-up noise off stderr, its runtime not yet
started, so thread pools may still be chosen), then calls FUNCTION(spec, channel). It answers with lines
`TXB <json>` on stdout (other stdout lines are ignored) and reads one-line requests from stdin; a closed
stdin means the parent needs nothing more. It inherits the parent's environment, so the allocator
(`TX_KERAS_ALLOCATOR`) and TensorFlow's switches (`--onednn`) are the same.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping

PREFIX = "TXB "


class WorkerFailed(RuntimeError):
    """A worker process ended without its answer: tx-bench prints it as its one-line error."""


class Channel:
    """The worker's side of the protocol."""

    def answer(self, value: dict) -> None:
        """One answer line."""
        print(PREFIX + json.dumps(value), flush=True)

    def request(self) -> str | None:
        """The parent's next request line, None once it closed stdin."""
        line = sys.stdin.readline()
        return line.strip() if line else None


class WorkerProcess:
    """The parent's side: one worker, alive until `close`. `name` says which in a WorkerFailed."""

    def __init__(self, function: str, spec: dict, name: str, env: Mapping[str, str] | None = None):
        self.name = name
        self._stderr = tempfile.TemporaryFile(mode="w+")  # a file: TensorFlow's noise cannot fill a pipe
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, function, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )

    def ask(self, request: str) -> None:
        """Send one request line."""
        with contextlib.suppress(BrokenPipeError):  # it ended: reading its answer raises WorkerFailed
            self._process.stdin.write(request + "\n")
            self._process.stdin.flush()

    def answer(self) -> dict:
        """The worker's next answer; WorkerFailed with its last stderr line when it ends first."""
        for line in self._process.stdout:
            if line.startswith(PREFIX):
                return json.loads(line[len(PREFIX) :])
        code = self._process.wait()
        self._stderr.seek(0)
        last = (self._stderr.read().strip().splitlines() or ["(no output)"])[-1]
        self._stderr.close()
        raise WorkerFailed(f"the {self.name} ended with code {code}: {last}")

    def close(self, kill: bool = False) -> None:
        """End the worker: stdin closed and its exit awaited, or `kill`ed where its state is no use."""
        if kill and self._process.poll() is None:
            self._process.kill()
        with contextlib.suppress(BrokenPipeError):  # one that ended already
            self._process.stdin.close()
        self._process.wait()
        self._stderr.close()


def worker_answer(function: str, spec: dict, name: str) -> dict:
    """The one answer of a worker that measures once and ends (`function` as WorkerProcess takes it)."""
    worker = WorkerProcess(function, spec, name)
    try:
        return worker.answer()
    finally:
        worker.close()


def _main() -> None:
    function, spec = sys.argv[1], json.loads(sys.argv[2])
    backend = spec.get("backend", "tensorflow")
    from tx_keras.runtime.allocator import configure_allocator
    from tx_keras.runtime.keras_backend import select_backend

    select_backend(backend)  # before Keras's first import
    configure_allocator()  # as the commands' processes
    if backend == "tensorflow":
        from tx_keras.runtime.quiet_startup import start_tensorflow

        start_tensorflow()
    module, _, name = function.partition(":")
    getattr(importlib.import_module(module), name)(spec, Channel())


if __name__ == "__main__":
    _main()
