"""What the step in row parts is worth where users train: the real path's row with tx-train's thread
pools (one intra-op thread, the step's rows in two parts on 2 cores: training/step_threads.py) against
the same row with TensorFlow's default pools and the whole batch a step, raced A B B A
(real_path_race.py)."""

from __future__ import annotations

from tx_keras.benchmark.real_path import RealPathSize
from tx_keras.benchmark.real_path_race import race


def parts_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """(ours' first real-path row, as without the comparison; the race (real_path_race.py), with the
    parts ours' step was cut into: 1 where the plan keeps it whole, and then nothing differs)."""
    first, comparison = race(size, "default_pools", seed, planned_pools=False)
    return first, {**comparison, "step_parts": first["step_parts"]}
