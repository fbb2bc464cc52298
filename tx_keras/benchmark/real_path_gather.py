"""What training on the real positions only is worth where users train: the real path's row (real_path.py)
against the same model computing every position, padding included, as the peers do (`EveryPosition`),
raced A B B A (real_path_race.py)."""

from __future__ import annotations

from tx_keras.benchmark.real_path import RealPathSize
from tx_keras.benchmark.real_path_race import race


def gather_worth(size: RealPathSize, seed: int = 0) -> tuple[dict, dict]:
    """(ours' first real-path row, as without the comparison; the race (real_path_race.py), with the
    padding share the gather skips)."""
    first, comparison = race(size, "every_position", seed, every_position=True)
    return first, {**comparison, "padding_share": first["padding_share"]}
