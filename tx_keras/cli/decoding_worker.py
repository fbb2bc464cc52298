"""tx-bench's decoding rows in a process of their own (benchmark/decoding_process.py): started like
tx-translate, with the allocator and TensorFlow settings tx-bench's process has, but a fresh heap.

Its thread pools are tx-translate's plan (decoding/row_parts.py) or, for the comparison, TensorFlow's
defaults: the pools are per process, chosen before its runtime starts.

Protocol: the spec is argv[1] (JSON: size, outputs, repeats, fused_qkv, saved_model, planned_pools); the
answer is one line `TXD <json>` on stdout (other stdout lines are ignored): the decoding rates and this
process's facts.
"""

from __future__ import annotations

import json
import os
import sys

from tx_keras.benchmark.worker_process import answer, start_worker
from tx_keras.runtime import allocator

PREFIX = "TXD "


def main() -> None:
    spec = json.loads(sys.argv[1])
    start_worker()  # as tx-translate's process starts
    from tx_keras.benchmark.decoding_speed import decoding_results
    from tx_keras.benchmark.machine import onednn_enabled
    from tx_keras.benchmark.size import BenchSize
    from tx_keras.decoding.row_parts import plan_decoding_threads
    from tx_keras.runtime.thread_pools import inter_op_threads, intra_op_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_decoding_threads()  # before TensorFlow's runtime starts, as tx-translate
    rates = decoding_results(
        BenchSize(**spec["size"]), spec["outputs"], spec["repeats"], spec["fused_qkv"], spec["saved_model"]
    )
    process = {
        "pid": os.getpid(),
        "allocator": allocator.applied(),
        "onednn": onednn_enabled(),
        "planned_pools": spec["planned_pools"],
        "thread_pools": pools,
        "intra_op_threads": intra_op_threads(),
        "inter_op_threads": inter_op_threads(),
    }
    answer(PREFIX, {"decoding": rates, "process": process})


if __name__ == "__main__":
    main()
