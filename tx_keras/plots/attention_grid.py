"""One image per layer and attention kind: every head's heat-map in a grid, tokens on the axes."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

_COLUMNS = 4  # heads per row
_INCHES_PER_HEAD = 2.6
_DPI = 80


def attention_grid_image(
    weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str
) -> np.ndarray:
    """weights (h, Tq, Tk) for the real tokens of one sentence -> an RGB uint8 image (H, W, 3).

    Rows are the queries (the words that look), columns the keys (the words looked at), like the
    Transformer tutorial's plots. Drawn on a bare Agg canvas (no pyplot state), so it is safe to call
    from a training callback. The image size depends only on the head count, so the images of every
    probe sentence stack into one TensorBoard summary.
    """
    heads = weights.shape[0]
    columns = min(heads, _COLUMNS)
    rows = math.ceil(heads / columns)
    figure = Figure(figsize=(columns * _INCHES_PER_HEAD, rows * _INCHES_PER_HEAD + 0.4), dpi=_DPI)
    canvas = FigureCanvasAgg(figure)
    font = 7 if max(len(query_tokens), len(key_tokens)) <= 14 else 5
    for head in range(heads):
        axes = figure.add_subplot(rows, columns, head + 1)
        axes.imshow(weights[head], vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
        axes.set_title(f"head {head + 1}", fontsize=8)
        axes.set_xticks(range(len(key_tokens)), key_tokens, rotation=90, fontsize=font)
        axes.set_yticks(range(len(query_tokens)), query_tokens, fontsize=font)
        axes.tick_params(length=0, pad=1)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    figure.clear()
    return image
