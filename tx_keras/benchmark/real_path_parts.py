"""What the step in row parts is worth where users train: the real path's row with tx-train's thread
pools (one intra-op thread, the step's rows in two parts on 2 cores: training/step_threads.py) against
the same row with TensorFlow's default pools and the whole batch a step, raced A B B A
(real_path_race.py)."""

from __future__ import annotations

from tx_keras.benchmark.real_path import RealPathSize
from tx_keras.benchmark.real_path_race import ORDER, race


def parts_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """(ours' first real-path row, as without the comparison; the comparison: each row's steps a minute,
    CPU ms a step and cores busy, the pair ratios by wall and CPU, their geometric means)."""
    ours, whole, ratios = race(size, seed, planned_pools=False)
    return ours[0], {
        "order": ["default_pools" if turn else "ours" for turn in ORDER],
        "step_parts": ours[0]["step_parts"],  # 1 where the plan keeps the step whole: then nothing differs
        "ours_steps_per_minute": [row["steps_per_minute"] for row in ours],
        "default_pools_steps_per_minute": [row["steps_per_minute"] for row in whole],
        "ours_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in ours],
        "default_pools_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in whole],
        "ours_cpu_per_wall": [row["cpu_per_wall"] for row in ours],
        "default_pools_cpu_per_wall": [row["cpu_per_wall"] for row in whole],
        **ratios,
    }
