"""What training on the real positions only is worth where users train: the real path's row (real_path.py)
against the same model computing every position, padding included, as the peers do (`EveryPosition`).

The two alternate A B B A in one process, so that the machine's drift over the ~2 minutes lands on both
and each neighbouring pair (A1 B1, B2 A2) gives one ratio; both pairs are printed, and their geometric
mean is the figure. Two pairs give no interval: the pair ratios' spread is what the run can say."""

from __future__ import annotations

from tx_keras.benchmark.ratio_interval import geometric_mean
from tx_keras.benchmark.real_path import RealPathSize, real_path_row

ORDER = (False, True, True, False)  # every_position per row: ours, every, every, ours


def gather_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """(ours' first real-path row, as without the comparison; the comparison: each row's steps a minute
    and CPU ms a step, the pair ratios by wall and CPU, their geometric means)."""
    rows = [real_path_row(size, seed, every_position=every) for every in ORDER]
    ours = [row for row in rows if not row["every_position"]]
    every = [row for row in rows if row["every_position"]]
    wall = [a["steps_per_minute"] / b["steps_per_minute"] for a, b in zip(ours, every, strict=True)]
    cpu = [b["cpu_ms_per_step"] / a["cpu_ms_per_step"] for a, b in zip(ours, every, strict=True)]
    return ours[0], {
        "order": ["every_position" if every_position else "ours" for every_position in ORDER],
        "ours_steps_per_minute": [row["steps_per_minute"] for row in ours],
        "every_position_steps_per_minute": [row["steps_per_minute"] for row in every],
        "ours_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in ours],
        "every_position_cpu_ms_per_step": [row["cpu_ms_per_step"] for row in every],
        "every_position_cpu_per_wall": [row["cpu_per_wall"] for row in every],
        "pair_ratios": wall,  # ours' steps a minute over every position's, per neighbouring pair
        "cpu_pair_ratios": cpu,  # every position's CPU per step over ours'
        "ratio": geometric_mean(wall),
        "cpu_ratio": geometric_mean(cpu),
        "padding_share": ours[0]["padding_share"],
    }
