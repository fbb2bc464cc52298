"""One sentence's cross-attention as an alignment: which source words each output word looked at."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.image import imsave

from tx_keras.plots.attention_grid import attention_grid_image


def alignment_table(weights: np.ndarray, output_tokens: list[str], source_tokens: list[str]) -> str:
    """weights (T_out, T_source) -> a fixed-width table: source words as columns, output words as rows,
    two decimals, so a terminal shows the alignment without a plot."""
    weights = np.asarray(weights)
    if weights.shape != (len(output_tokens), len(source_tokens)):
        raise ValueError(
            f"weights {weights.shape} do not match {len(output_tokens)} x {len(source_tokens)} tokens"
        )
    row_width = max([len(token) for token in output_tokens] + [1])
    widths = [max(len(token), 4) for token in source_tokens]
    header = "".join(f"  {token:>{width}}" for token, width in zip(source_tokens, widths, strict=True))
    lines = [" " * row_width + header]
    for token, row in zip(output_tokens, weights, strict=True):
        cells = "".join(f"  {value:>{width}.2f}" for value, width in zip(row, widths, strict=True))
        lines.append(f"{token:<{row_width}}{cells}")
    return "\n".join(lines)


def save_alignment_png(
    path: Path, weights: np.ndarray, output_tokens: list[str], source_tokens: list[str], title: str
) -> None:
    """weights (heads, T_out, T_source) (one "head" for an average) -> a heat-map PNG, one panel per head."""
    image = attention_grid_image(np.asarray(weights), output_tokens, source_tokens, title)
    imsave(Path(path), image)
