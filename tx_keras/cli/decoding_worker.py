"""tx-bench's decoding calls in a process of their own (benchmark/decoding_process.py): started like
tx-translate, with the allocator and TensorFlow settings tx-bench's process has, but a fresh heap.

Its thread pools are tx-translate's plan (decoding/row_parts.py) or, for the comparison, TensorFlow's
defaults: the pools are per process, chosen before its runtime starts.

Protocol: the spec is argv[1] (JSON: size, outputs, fused_qkv, saved_model, planned_pools). Once its
calls are traced and warm, the worker answers one line `TXD <json>` on stdout (other stdout lines are
ignored): the call keys and this process's facts. Then each line on stdin names a call key; the worker
times one call of it and answers `TXD {"wall": s, "cpu": s}`. It ends when stdin closes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tx_keras.benchmark.worker_process import answer, start_worker
from tx_keras.runtime import allocator

PREFIX = "TXD "


def main() -> None:
    spec = json.loads(sys.argv[1])
    start_worker()  # as tx-translate's process starts
    from tx_keras.benchmark.decoding_speed import decoding_calls
    from tx_keras.benchmark.machine import onednn_enabled
    from tx_keras.benchmark.size import BenchSize
    from tx_keras.decoding.row_parts import plan_decoding_threads
    from tx_keras.runtime.thread_pools import inter_op_threads, intra_op_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_decoding_threads()  # before TensorFlow's runtime starts, as tx-translate
    with tempfile.TemporaryDirectory() as folder:  # the SavedModel's, kept while it is called
        size = BenchSize(**spec["size"])
        calls = decoding_calls(size, spec["outputs"], spec["fused_qkv"], spec["saved_model"], Path(folder))
        process = {
            "pid": os.getpid(),
            "allocator": allocator.applied(),
            "onednn": onednn_enabled(),
            "planned_pools": spec["planned_pools"],
            "thread_pools": pools,
            "intra_op_threads": intra_op_threads(),
            "inter_op_threads": inter_op_threads(),
        }
        answer(PREFIX, {"calls": list(calls), "process": process})
        for line in sys.stdin:
            call = calls[line.strip()]
            started, started_cpu = time.perf_counter(), time.process_time()
            call()
            answer(PREFIX, {"wall": time.perf_counter() - started, "cpu": time.process_time() - started_cpu})


if __name__ == "__main__":
    main()
