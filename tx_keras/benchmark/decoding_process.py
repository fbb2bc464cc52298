"""tx-bench's decoding rows, timed in fresh worker processes (decoding_speed.py, worker_process.py) rather
than after the training rows in tx-bench's own.

A user decodes in a process of its own (tx-translate, a SavedModel server), not in one whose heap just held
minutes of three models' training: in one process the cached decoder lost ~9 % of its rate after a real-path
row (docs/decisions/allocator-bfc-pool.md), a trace of the benchmark's order, not of decoding. A worker
inherits this process's environment, so the allocator (`TX_KERAS_ALLOCATOR`) and TensorFlow's switches
(`--onednn`) are the same; its facts (pid, allocator, oneDNN state, thread pools) come back with the rates,
into the run's JSON.

Its pools are tx-translate's plan; where that plan changed TensorFlow's defaults, a second worker on the
defaults lives beside it, and the two are timed in turns (decoding_turns.py): the planned pools' gain
is then a ratio with an interval, as the training rows' are, not two processes one after the other.
"""

from __future__ import annotations

import dataclasses
import os

from tx_keras.benchmark.decoding_turns import decoding_rates, pools_gain, timed_turns
from tx_keras.benchmark.settings import BenchSettings
from tx_keras.benchmark.worker_process import WorkerProcess
from tx_keras.runtime.pool_plan import given_pools

CALLS = "tx_keras.benchmark.decoding_speed:serve_calls"  # the worker's function (worker_process.py)


class DecodingWorker:
    """One decoding process, alive while its calls are timed: `calls` and `facts` once it is warm."""

    def __init__(self, spec: dict):
        self._process = WorkerProcess(CALLS, spec, "decoding process")
        ready = self._process.answer()
        self.calls: list[str] = ready["calls"]
        self.facts: dict = ready["process"]

    def time(self, key: str) -> tuple[float, float]:
        """(wall, CPU) seconds of one call of `key` in this process."""
        self._process.ask(key)
        timed = self._process.answer()
        return timed["wall"], timed["cpu"]

    def close(self) -> None:
        """End the worker (it exits when its stdin closes, removing its SavedModel)."""
        self._process.close()


def decoding_in_own_process(settings: BenchSettings) -> dict:
    """{"decoding": rates as decoding_turns.decoding_rates gives them on tx-translate's pools,
    "decoding_process": that worker's facts}, and where its plan changed TensorFlow's pools (and the user
    did not set them) "decoding_default_pools": the rates of a worker on the defaults, timed in turns with
    it, "decoding_default_process" its facts, and "decoding_pools": per call key, how many times faster
    the planned pools ran (pools_gain).
    Raises `WorkerFailed` when a worker ends without its answer."""
    size = settings.size
    spec = {
        "size": dataclasses.asdict(size),
        "outputs": list(settings.timing.outputs),
        "fused_qkv": settings.fused_qkv,
        "saved_model": settings.saved_model,
    }
    workers = {"planned": DecodingWorker({**spec, "planned_pools": True})}
    try:
        facts = workers["planned"].facts
        if facts["intra_op_threads"] == 1 and not given_pools():  # the plan changed the defaults
            workers["default"] = DecodingWorker({**spec, "planned_pools": False})
        wall, cpu = timed_turns(workers, settings.timing.repeats)
    finally:
        for worker in workers.values():
            worker.close()
    results = {
        "decoding": decoding_rates(wall["planned"], cpu["planned"], size.batch),
        "decoding_process": {**facts, "parent_pid": os.getpid()},  # parent: tx-bench's, to show they differ
    }
    if "default" in workers:
        results["decoding_default_pools"] = decoding_rates(wall["default"], cpu["default"], size.batch)
        results["decoding_default_process"] = workers["default"].facts
        results["decoding_pools"] = pools_gain(wall["planned"], wall["default"])
    return results
