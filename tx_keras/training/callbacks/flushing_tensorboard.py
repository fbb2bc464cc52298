"""Keras' TensorBoard callback, with its event files flushed at every epoch's end."""

from __future__ import annotations

import keras


class FlushingTensorBoard(keras.callbacks.TensorBoard):
    """Writes each epoch's curves to disk before the epoch's checkpoint is taken.

    Keras' writers flush every two minutes: a run killed after a checkpoint would otherwise lose the
    points of the epochs it had finished, and resuming from that checkpoint would never write them again.
    """

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        super().on_epoch_end(epoch, logs)
        for writer in self._writers.values():  # Keras keeps its train/validation writers here
            writer.flush()
