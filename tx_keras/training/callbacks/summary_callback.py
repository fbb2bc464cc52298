"""The base of the dashboard callbacks: one summary writer of their own, always recording."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import keras
import tensorflow as tf


class SummaryCallback(keras.callbacks.Callback):
    """Writes into its own sub-folder of the run (one TensorBoard run per kind of summary).

    `record_if(True)` is needed: Keras' TensorBoard callback sets a global recording condition that
    silently drops summaries written from `on_epoch_end` otherwise.
    """

    def __init__(self, log_dir: Path):
        super().__init__()
        self.log_dir = log_dir
        self._writer: tf.summary.SummaryWriter | None = None

    @contextmanager
    def writing(self) -> Iterator[None]:
        self._writer = self._writer or tf.summary.create_file_writer(str(self.log_dir))
        with self._writer.as_default(), tf.summary.record_if(True):
            yield
        self._writer.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
