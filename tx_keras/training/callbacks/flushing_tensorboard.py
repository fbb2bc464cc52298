"""Keras' TensorBoard callback, with its event files flushed at every epoch's end and the learning rate
logged after the scores."""

from __future__ import annotations

import keras

LEARNING_RATE_TAG = "optimizer/learning_rate"
# Validation exact-match (tx_keras/training/callbacks/validation_exact_match.py) is drawn in the accuracy
# group: `val_accuracy/exact_match` becomes the validation run's `epoch_accuracy/exact_match`.
_RENAMED = {"val_exact_match": "val_accuracy/exact_match"}


class FlushingTensorBoard(keras.callbacks.TensorBoard):
    """Writes each epoch's curves to disk before the epoch's checkpoint is taken.

    Keras' writers flush every two minutes: a run killed after a checkpoint would otherwise lose the
    points of the epochs it had finished, and resuming from that checkpoint would never write them again.

    TensorBoard's Scalars tab sorts the tag groups by name and opens only the first two. Keras logs the
    learning rate as `epoch_learning_rate`, which would sit between `epoch_accuracy` and `epoch_loss` and
    close the loss; it is written as `optimizer/learning_rate` instead (train run), after the scores. The
    per-epoch validation exact-match joins the `epoch_accuracy` group. So Scalars opens on accuracy (token
    and sentence) and loss.
    """

    def on_test_end(self, logs: dict | None = None) -> None:
        """Keras also writes each validation pass as `evaluation_<metric>_vs_iterations`: the validation
        curves again, against steps, as two more Scalars groups ahead of the scores; not written."""
        self._pop_writer()

    def _log_epoch_metrics(self, epoch: int, logs: dict) -> None:
        super()._log_epoch_metrics(epoch, {_RENAMED.get(key, key): value for key, value in logs.items()})

    def _collect_learning_rate(self, logs: dict) -> dict:
        logs = super()._collect_learning_rate(dict(logs))
        self._learning_rate = logs.pop("learning_rate", None)
        return logs

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._learning_rate = None
        super().on_epoch_end(epoch, logs)
        if self._learning_rate is not None:
            with self._train_writer.as_default():
                self.summary.scalar(LEARNING_RATE_TAG, self._learning_rate, step=epoch)
        for writer in self._writers.values():  # Keras keeps its train/validation writers here
            writer.flush()
