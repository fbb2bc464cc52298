"""Which rows of a tx-bench block are compared, by name alone: the timing (throughput.py) runs its windows
until these ratios are narrow, the block (training_blocks.py) reports them, and the docs renderer
(markdown_table.py, which imports no Keras) prints the equal-work ones from the same list."""

from __future__ import annotations

from collections.abc import Iterable


def compared_pairs(models: Iterable[str]) -> list[tuple[str, str]]:
    """The (ours, other) row pairs a block's ratios compare: ours against every other model, and ours
    computing every position (when raced) against each peer."""
    names = list(models)
    if "ours" not in names:
        return []
    pairs = [("ours", other) for other in names if other != "ours"]
    if "ours_every_position" in names:
        pairs += [("ours_every_position", peer) for peer in names if not peer.startswith("ours")]
    return pairs
