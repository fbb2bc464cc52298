"""The base of the dashboard callbacks: one summary writer per folder, shared, always recording."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import keras
import tensorflow as tf

# Writers by folder, with how many callbacks hold each: callbacks that write into the same folder (the
# run folder) share one event file. With one file per writer TensorBoard's default reader, which reads
# a folder's files one after the other, would miss points added to an older file during a live run.
_WRITERS: dict[str, tuple[tf.summary.SummaryWriter, int]] = {}
_LOCK = threading.Lock()  # the attention maps are written from a background thread


def _acquire(log_dir: Path) -> tf.summary.SummaryWriter:
    with _LOCK:
        writer, users = _WRITERS.get(str(log_dir), (None, 0))
        writer = writer or tf.summary.create_file_writer(str(log_dir))
        _WRITERS[str(log_dir)] = (writer, users + 1)
        return writer


def _release(log_dir: Path) -> None:
    with _LOCK:
        writer, users = _WRITERS[str(log_dir)]
        if users > 1:
            _WRITERS[str(log_dir)] = (writer, users - 1)
            writer.flush()
        else:
            del _WRITERS[str(log_dir)]
            writer.close()


class SummaryCallback(keras.callbacks.Callback):
    """Writes into `log_dir` (the run folder) through the writer it shares with the other callbacks there.

    `record_if(True)` is needed: Keras' TensorBoard callback sets a global recording condition that
    silently drops summaries written from `on_epoch_end` otherwise.
    """

    def __init__(self, log_dir: Path):
        super().__init__()
        self.log_dir = log_dir
        self._writer: tf.summary.SummaryWriter | None = None

    @contextmanager
    def writing(self) -> Iterator[None]:
        self._writer = self._writer or _acquire(self.log_dir)
        with self._writer.as_default(), tf.summary.record_if(True):
            yield
        self._writer.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._writer is not None:
            _release(self.log_dir)
            self._writer = None
