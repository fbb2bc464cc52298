"""tx-bench's decoding rows, timed in a fresh process (cli/decoding_worker.py) rather than after the
training rows in tx-bench's own.

A user decodes in a process of its own (tx-translate, a SavedModel server), not in one whose heap just
held minutes of three models' training: in one process the cached decoder lost ~9 % of its rate after a
real-path row (docs/performance.md, "Adam in one kernel, and what the one-arena allocator costs
decoding"), a trace of the benchmark's order, not of decoding. The worker inherits this process's
environment, so the allocator (`TX_KERAS_ALLOCATOR`) and TensorFlow's switches (`--onednn`) are the same;
its facts (pid, allocator, oneDNN state, thread pools) come back with the rates, into the run's JSON.
Its pools are tx-translate's plan, or TensorFlow's defaults for the comparison (`planned_pools`).
"""

from __future__ import annotations

import dataclasses
import os

from tx_keras.benchmark.size import BenchSize
from tx_keras.benchmark.timing import Timing
from tx_keras.benchmark.worker_process import worker_answer
from tx_keras.cli.decoding_worker import PREFIX

WORKER = "tx_keras.cli.decoding_worker"


def decoding_in_own_process(
    size: BenchSize, timing: Timing, fused_qkv: bool, saved_model: bool, planned_pools: bool = True
) -> dict:
    """{"decoding": rates as `decoding_results` gives them, "process": the worker's facts}; raises
    `WorkerFailed` when the worker ends without them."""
    spec = {
        "size": dataclasses.asdict(size),
        "outputs": list(timing.outputs),
        "repeats": timing.repeats,
        "fused_qkv": fused_qkv,
        "saved_model": saved_model,
        "planned_pools": planned_pools,
    }
    answer = worker_answer(WORKER, spec, PREFIX)
    answer["process"]["parent_pid"] = os.getpid()  # tx-bench's own: the report shows they differ
    return answer
