"""tx-bench's decoding rows in a process of their own (benchmark/decoding_process.py): started like
tx-translate, with the allocator and TensorFlow settings tx-bench's process has, but a fresh heap.

Protocol: the spec is argv[1] (JSON: size, outputs, repeats, fused_qkv, saved_model); the answer is one
line `TXD <json>` on stdout (other stdout lines are ignored): the decoding rates and this process's facts.
"""

from __future__ import annotations

import json
import os
import sys

from tx_keras.runtime import allocator
from tx_keras.runtime.keras_backend import select_backend

PREFIX = "TXD "


def main() -> None:
    spec = json.loads(sys.argv[1])
    select_backend("tensorflow")  # before Keras's first import
    allocator.configure_allocator()  # as tx-translate's process
    from tx_keras.runtime.quiet_startup import start_tensorflow

    start_tensorflow()
    from tx_keras.benchmark.decoding_speed import decoding_results
    from tx_keras.benchmark.machine import onednn_enabled
    from tx_keras.benchmark.size import BenchSize

    rates = decoding_results(
        BenchSize(**spec["size"]), spec["outputs"], spec["repeats"], spec["fused_qkv"], spec["saved_model"]
    )
    process = {"pid": os.getpid(), "allocator": allocator.applied(), "onednn": onednn_enabled()}
    print(PREFIX + json.dumps({"decoding": rates, "process": process}), flush=True)


if __name__ == "__main__":
    main()
