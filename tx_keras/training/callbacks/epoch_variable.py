"""The epoch number as a variable (input_batches.pipeline_counter), for input pipelines whose order
depends on the epoch."""

from __future__ import annotations

import keras


class EpochVariable(keras.callbacks.Callback):
    """Sets `variable` to the 0-based epoch index at the start of every epoch.

    Keras opens a fresh iterator over the training dataset after `on_epoch_begin`, so a pipeline that
    reads this variable (data.make_dataset's shuffle) draws epoch k's order from k itself, not from how
    many times it was iterated before: a resumed run (fit(initial_epoch=k)) sees the same epochs.
    """

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.variable.assign(epoch)
