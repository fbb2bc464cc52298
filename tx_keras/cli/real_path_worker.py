"""tx-bench's real-path rows in a process of their own (benchmark/real_path_process.py): started as
tx-train starts a run, its thread pools planned as tx-train plans them (training/step_threads.py) or
left at TensorFlow's defaults, which only a fresh process can choose.

Protocol: the spec is argv[1] (JSON: size, seed, every_position, planned_pools); the answer is one line
`TXR <json>` on stdout (other stdout lines are ignored): the row, with the pools it ran on.
"""

from __future__ import annotations

import json
import sys

from tx_keras.benchmark.worker_process import answer, start_worker

PREFIX = "TXR "


def main() -> None:
    spec = json.loads(sys.argv[1])
    start_worker()  # as tx-train's process starts
    from tx_keras.benchmark.real_path import RealPathSize, preset, real_path_row
    from tx_keras.training.step_threads import plan_step_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_step_threads(preset().trainer)  # before TensorFlow's runtime starts, as tx-train
    size = spec["size"]
    size = RealPathSize(**{**size, "model": tuple(tuple(knob) for knob in size["model"])})
    row = real_path_row(size, spec["seed"], spec["every_position"])
    answer(PREFIX, {**row, "planned_pools": spec["planned_pools"], "thread_pools": pools})


if __name__ == "__main__":
    main()
