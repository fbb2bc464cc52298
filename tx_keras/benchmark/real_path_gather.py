"""What training on the real positions only is worth where users train: the real path's row (real_path.py)
against the same model computing every position, padding included, as the peers do (`EveryPosition`),
raced A B B A (real_path_race.py)."""

from __future__ import annotations

from tx_keras.benchmark.real_path import RealPathSize
from tx_keras.benchmark.real_path_race import ORDER, race


def gather_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """(ours' first real-path row, as without the comparison; the comparison: each row's steps a minute
    and CPU ms a step, the pair ratios by wall and CPU, their geometric means)."""
    ours, every, ratios = race(size, seed, every_position=True)
    return ours[0], {
        "order": ["every_position" if turn else "ours" for turn in ORDER],
        "ours_steps_per_minute": [row["steps_per_minute"] for row in ours],
        "every_position_steps_per_minute": [row["steps_per_minute"] for row in every],
        "ours_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in ours],
        "every_position_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in every],
        "every_position_cpu_per_wall": [row["cpu_per_wall"] for row in every],
        **ratios,
        "padding_share": ours[0]["padding_share"],
    }
