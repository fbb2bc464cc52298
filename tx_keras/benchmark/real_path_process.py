"""tx-bench's real-path rows, each trained in a fresh process (cli/real_path_worker.py).

TensorFlow sizes its thread pools once per process, when its runtime starts, and tx-train chooses them
for the run before that (training/step_threads.py: one intra-op thread and a step in two row parts on 2
cores). A row that stands for a user's run must start the same way; a row with TensorFlow's default
pools is its peer (real_path_race.py). The worker inherits this process's environment
(benchmark/worker_process.py).
"""

from __future__ import annotations

import dataclasses

from tx_keras.benchmark.real_path import RealPathSize
from tx_keras.benchmark.worker_process import worker_answer
from tx_keras.cli.real_path_worker import PREFIX

WORKER = "tx_keras.cli.real_path_worker"


def real_path_in_own_process(
    size: RealPathSize, seed: int = 0, every_position: bool = False, planned_pools: bool = True
) -> dict:
    """`real_path_row(size, seed, every_position)` in a fresh process whose thread pools are tx-train's
    plan (`planned_pools`) or TensorFlow's defaults; the row, with `planned_pools` and the plan's line
    (`thread_pools`). Raises `WorkerFailed` when the worker ends without it."""
    spec = {
        "size": dataclasses.asdict(size),
        "seed": seed,
        "every_position": every_position,
        "planned_pools": planned_pools,
    }
    return worker_answer(WORKER, spec, PREFIX)
