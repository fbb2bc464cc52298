"""tx-bench's real-path rows in a process of their own (benchmark/real_path_process.py): started as
tx-train starts a run, its thread pools planned as tx-train plans them (training/step_threads.py) or
left at TensorFlow's defaults, which only a fresh process can choose.

Protocol: the spec is argv[1] (JSON: size, seed, every_position, planned_pools); the answer is one line
`TXR <json>` on stdout (other stdout lines are ignored): the row, with the pools it ran on.
"""

from __future__ import annotations

import json
import sys

from tx_keras.runtime import allocator
from tx_keras.runtime.keras_backend import select_backend

PREFIX = "TXR "


def main() -> None:
    spec = json.loads(sys.argv[1])
    select_backend("tensorflow")  # before Keras's first import
    allocator.configure_allocator()  # as tx-train's process
    from tx_keras.runtime.quiet_startup import start_tensorflow

    start_tensorflow()
    from tx_keras.benchmark.real_path import RealPathSize, preset, real_path_row
    from tx_keras.training.step_threads import plan_step_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_step_threads(preset().trainer)  # before TensorFlow's runtime starts, as tx-train
    size = spec["size"]
    size = RealPathSize(**{**size, "model": tuple(tuple(knob) for knob in size["model"])})
    row = real_path_row(size, spec["seed"], spec["every_position"])
    row = {**row, "planned_pools": spec["planned_pools"], "thread_pools": pools}  # the plan's own line
    print(PREFIX + json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
