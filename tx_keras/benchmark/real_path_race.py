"""The real path's row against a variant of itself: each row in a fresh process (real_path.py), alternated
A B B A, so that the machine's drift over the minutes lands on both and each neighbouring pair (A1 B1, B2
A2) gives one ratio; both pairs are printed, and their geometric mean is the figure. Two pairs give no
interval: the pair ratios' spread is what the run can say.

Two variants: the same model computing every position, padding included, as the peers do (`gather_worth`:
what training on the real positions only is worth where users train), and the same row on TensorFlow's
default thread pools, the whole batch a step (`parts_worth`: what tx-train's pools and the step in row
parts are worth, training/step/step_threads.py)."""

from __future__ import annotations

from tx_keras.benchmark.ratio_interval import geometric_mean
from tx_keras.benchmark.real_path import real_path_in_own_process
from tx_keras.benchmark.settings import RealPathSize

ORDER = (False, True, True, False)  # the variant's turns: ours, variant, variant, ours


def race(size: RealPathSize, name: str, seed: int = 0, **variant) -> tuple[dict, dict]:
    """(ours' first row, as without the race; the race): `variant` holds the arguments of
    `real_path_in_own_process` that make the other row, `name` its key prefix. The race holds the
    order, each side's steps a minute, CPU ms a step and cores busy, and the ratios, ours over the
    variant's, so > 1 means ours is faster (steps a minute) or spends less CPU a step."""
    rows = [real_path_in_own_process(size, seed, **(variant if turn else {})) for turn in ORDER]
    sides = {
        "ours": [row for row, turn in zip(rows, ORDER, strict=True) if not turn],
        name: [row for row, turn in zip(rows, ORDER, strict=True) if turn],
    }
    ours, other = sides.values()
    wall = [a["steps_per_minute"] / b["steps_per_minute"] for a, b in zip(ours, other, strict=True)]
    cpu = [b["cpu_ms_per_step"] / a["cpu_ms_per_step"] for a, b in zip(ours, other, strict=True)]
    return ours[0], {
        "order": [name if turn else "ours" for turn in ORDER],
        **{
            f"{side}_{figure}": [row[figure] for row in side_rows]
            for figure in ("steps_per_minute", "cpu_ms_per_step", "cpu_per_wall")
            for side, side_rows in sides.items()
        },
        "pair_ratios": wall,  # ours' steps a minute over the variant's, per neighbouring pair
        "cpu_pair_ratios": cpu,  # the variant's CPU per step over ours'
        "ratio": geometric_mean(wall),
        "cpu_ratio": geometric_mean(cpu),
    }


def gather_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """The race against every position, with the padding share the gather skips."""
    first, comparison = race(size, "every_position", seed, every_position=True)
    return first, {**comparison, "padding_share": first["padding_share"]}


def parts_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """The race against TensorFlow's default pools, with the parts ours' step was cut into: 1 where the
    plan keeps it whole, and then nothing differs."""
    first, comparison = race(size, "default_pools", seed, planned_pools=False)
    return first, {**comparison, "step_parts": first["step_parts"]}
