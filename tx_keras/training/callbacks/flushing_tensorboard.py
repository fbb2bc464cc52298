"""Keras' TensorBoard callback, with its event files flushed at every epoch's end and the learning rate
logged after the scores."""

from __future__ import annotations

import keras

LEARNING_RATE_TAG = "optimizer/learning_rate"


class FlushingTensorBoard(keras.callbacks.TensorBoard):
    """Writes each epoch's curves to disk before the epoch's checkpoint is taken.

    Keras' writers flush every two minutes: a run killed after a checkpoint would otherwise lose the
    points of the epochs it had finished, and resuming from that checkpoint would never write them again.

    TensorBoard sorts Scalars groups by name and opens the first three. Keras logs the learning rate as
    `epoch_learning_rate`, which would sit between `epoch_exact_match` and `epoch_loss` and push the loss
    into a closed group; it is written as `optimizer/learning_rate` instead (train run), after the scores.
    So the Scalars tab opens on accuracy, exact-match and loss (or accuracy, loss and the final scores).
    """

    def on_test_end(self, logs: dict | None = None) -> None:
        """Keras also writes each validation pass as `evaluation_<metric>_vs_iterations`: the validation
        curves again, against steps, as two more Scalars groups ahead of the scores; not written."""
        self._pop_writer()

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
