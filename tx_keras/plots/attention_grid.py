"""One image per layer and attention kind: every head's heat-map in a grid, tokens on the axes."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from matplotlib import colormaps, font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# TensorBoard's Images tab shows an image in a card about 350 px wide: wider images are scaled down
# until their labels blur. Two heads per row and 12-px cells keep a 4-head map of a 12-token sentence
# about 390 px wide at 80 dpi, so its token labels stay legible without "Show actual image size".
_COLUMNS = 2  # heads per row of the grid
_CELL_INCHES = 0.15  # size of one query x key cell
_MIN_HEAD_INCHES = 1.2  # short sentences still get readable heads
_MIN_WIDTH_INCHES = 3.5  # room for the title above a single head
_DPI = 80
# Token labels fall back to these (when installed) for glyphs DejaVu Sans lacks: Chinese, Japanese, Thai.
_FALLBACK_FONTS = (
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans JP",
    "Noto Sans SC",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "Noto Sans Thai",
)


@cache
def _token_fonts() -> list[str]:
    """DejaVu Sans, then the installed fallbacks (matplotlib >= 3.6 falls back glyph by glyph)."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return ["DejaVu Sans", *(name for name in _FALLBACK_FONTS if name in installed)]


def _mosaic(weights: np.ndarray, columns: int) -> np.ndarray:
    """(h, Tq, Tk) -> one (rows*(Tq+1)-1, columns*(Tk+1)-1) array, heads separated by NaN gaps."""
    heads, queries, keys = weights.shape
    rows = math.ceil(heads / columns)
    mosaic = np.full((rows * (queries + 1) - 1, columns * (keys + 1) - 1), np.nan)
    for head in range(heads):
        row, column = divmod(head, columns)
        mosaic[
            row * (queries + 1) : row * (queries + 1) + queries,
            column * (keys + 1) : column * (keys + 1) + keys,
        ] = weights[head]
    return mosaic


def attention_grid_image(
    weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], title: str
) -> np.ndarray:
    """weights (h, Tq, Tk) for the real tokens of one sentence -> an RGB uint8 image (H, W, 3).

    Rows are the queries (the words that look), columns the keys (the words looked at), like the
    Transformer tutorial's plots; colour 0..1 on the same scale for every epoch. All heads are drawn as
    one mosaic in a single axes on a bare Agg canvas (no pyplot state): a figure with one axes per head
    costs several times more, and this runs during training.
    """
    heads, queries, keys = weights.shape
    columns = min(heads, _COLUMNS)
    rows = math.ceil(heads / columns)
    width = max(columns * (keys + 1) * _CELL_INCHES, columns * _MIN_HEAD_INCHES, _MIN_WIDTH_INCHES) + 1.0
    height = max(rows * (queries + 1) * _CELL_INCHES, rows * _MIN_HEAD_INCHES * 0.75) + 1.2
    figure = Figure(figsize=(width, height), dpi=_DPI)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_axes((0.9 / width, 0.8 / height, 1 - 1.0 / width, 1 - 1.2 / height))
    cmap = colormaps["viridis"].with_extremes(bad="white")
    axes.imshow(
        _mosaic(weights, columns), vmin=0.0, vmax=1.0, cmap=cmap, aspect="auto", interpolation="nearest"
    )
    x_ticks = [column * (keys + 1) + k for column in range(columns) for k in range(keys)]
    y_ticks = [row * (queries + 1) + q for row in range(rows) for q in range(queries)]
    axes.set_xticks(x_ticks, key_tokens * columns, rotation=90, fontsize=8, family=_token_fonts())
    axes.set_yticks(y_ticks, query_tokens * rows, fontsize=8, family=_token_fonts())
    axes.tick_params(length=0, pad=1)
    for spine in axes.spines.values():
        spine.set_visible(False)
    for head in range(heads):
        row, column = divmod(head, columns)
        axes.text(
            column * (keys + 1) + (keys - 1) / 2,
            row * (queries + 1) - 0.6,
            f"head {head + 1}",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    figure.suptitle(title, fontsize=9, y=1 - 0.1 / height, va="top")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
