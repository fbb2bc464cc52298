"""`logging.head_importance`: at the end of training, the validation loss with each head masked out in turn,
as a table (run_dir/head_importance.md, summary.json `head_importance`) and a TensorBoard heat-map."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import tensorflow as tf
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tx_keras.diagnostics.head_importance import HeadImportance, head_importance, importance_matrix
from tx_keras.run_folder.atomic_write import write_text
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced
from tx_keras.training.callbacks.summary_callback import SummaryCallback

ROWS = 256  # validation pairs the loss is measured on: one pass each per head, so 6 x 32 heads of the
# 2 + 2-layer model cost 193 passes; 256 pairs keep that to a few minutes on a 2-core CPU
TABLE = "head_importance.md"
TAG = "head_importance/loss_increase"


def heat_map(importance: HeadImportance, title: str) -> np.ndarray:
    """Layers down, heads across, the loss increase in colour (red: needed, blue: better without), as an
    RGB uint8 image (H, W, 3); values written in the cells while they fit."""
    matrix = importance_matrix(importance)
    layers, heads = matrix.shape
    figure = Figure(figsize=(max(4.0, 1.8 + 0.45 * heads), 1.2 + 0.4 * layers), dpi=100)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    scale = max(float(np.nanmax(np.abs(matrix))), 1e-6)
    image = axes.imshow(matrix, cmap="coolwarm", vmin=-scale, vmax=scale, aspect="auto")
    axes.set_yticks(range(layers), list(importance.increase), fontsize=8)
    axes.set_xticks(range(heads), [str(i + 1) for i in range(heads)], fontsize=7)
    axes.set_xlabel("head")
    if heads <= 16:
        for (row, column), value in np.ndenumerate(matrix):
            axes.text(column, row, f"{value:+.3f}", ha="center", va="center", fontsize=6)
    figure.colorbar(image, ax=axes, label="loss increase")
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


class HeadImportanceAtEnd(SummaryCallback):
    """On train end (not after a diverged run): `head_importance` on `validation` (a dataset of the first
    ROWS validation pairs), written as run_dir/TABLE and, with `image`, the TAG image at step `epochs`
    trained. `record` is then the summary.json field, None until measured."""

    def __init__(self, log_dir: Path, validation: tf.data.Dataset, rows: int, image: bool = True):
        super().__init__(log_dir)
        self.validation, self.rows, self.image = validation, rows, image
        self.record: dict | None = None
        self._epochs = 0

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._epochs = epoch + 1

    def _loss(self) -> float:
        with epoch_end_warning_silenced():  # bucketed batches: a dataset of unknown length ends normally
            return float(self.model.evaluate(self.validation, verbose=0, return_dict=True)["loss"])

    def on_train_end(self, logs: dict | None = None) -> None:
        if logs and not math.isfinite(float(logs.get("loss", 0.0))):
            super().on_train_end(logs)
            return
        importance = head_importance(self.model, self._loss)
        self.record = {"validation_pairs": self.rows, **importance.record()}
        write_text(self.log_dir / TABLE, importance.markdown(self.rows))
        if self.image:
            title = f"validation loss increase with one head masked (base {importance.base_loss:.3f})"
            with self.writing():
                tf.summary.image(TAG, heat_map(importance, title)[None], step=self._epochs)
        super().on_train_end(logs)
