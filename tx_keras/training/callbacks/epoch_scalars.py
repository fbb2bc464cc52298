"""Each epoch's scores as TensorBoard curves, written with tf.summary's public API and flushed at once."""

from __future__ import annotations

from pathlib import Path

import keras
import tensorflow as tf
from keras import ops

LEARNING_RATE_TAG = "optimizer/learning_rate"
# Validation exact-match (tx_keras/training/callbacks/validation_exact_match.py) is drawn in the accuracy
# group: `val_exact_match` becomes the validation run's `epoch_accuracy/exact_match`.
_RENAMED = {"val_exact_match": "val_accuracy/exact_match"}
_VALIDATION_PREFIX = "val_"


class EpochScalars(keras.callbacks.Callback):
    """The curves Keras' TensorBoard callback draws (`<run>/train` and `<run>/validation`, tags
    `epoch_<metric>`, step = epoch), written by us rather than by overriding that callback's private
    methods:

    - every epoch's points reach the disk before the epoch's checkpoint is taken (Keras' writers flush
      every two minutes: a run killed after a checkpoint would lose them, and its resume never writes them);
    - the learning rate is `optimizer/learning_rate`, not `epoch_learning_rate`: TensorBoard's Scalars tab
      sorts groups by name and opens the first two, so it opens on accuracy (token and sentence) and loss;
    - no `evaluation_<metric>_vs_iterations` copies of the validation curves.
    """

    def __init__(self, log_dir: str | Path) -> None:
        super().__init__()
        self._log_dir = Path(log_dir)
        self._writers: dict[str, tf.summary.SummaryWriter] = {}

    def _writer(self, split: str) -> tf.summary.SummaryWriter:
        if split not in self._writers:
            self._writers[split] = tf.summary.create_file_writer(str(self._log_dir / split))
        return self._writers[split]

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        curves: dict[str, dict[str, float]] = {"train": {}, "validation": {}}
        for key, value in (logs or {}).items():
            key = _RENAMED.get(key, key)
            if key == "learning_rate":
                continue
            if key.startswith(_VALIDATION_PREFIX):
                curves["validation"][f"epoch_{key[len(_VALIDATION_PREFIX) :]}"] = value
            else:
                curves["train"][f"epoch_{key}"] = value
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            curves["train"][LEARNING_RATE_TAG] = float(ops.convert_to_numpy(optimizer.learning_rate))
        for split, values in curves.items():
            if not values:
                continue
            writer = self._writer(split)
            with writer.as_default():
                for tag, value in values.items():
                    tf.summary.scalar(tag, value, step=epoch)
            writer.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
