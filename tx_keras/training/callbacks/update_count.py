"""Keeps the optimizer's step counter equal to the updates it took."""

from __future__ import annotations

import keras


class UpdateCount(keras.callbacks.Callback):
    """Resets `optimizer.iterations` to the updates taken, at every epoch's end.

    Keras 3 on TensorFlow gains one step at the end of every epoch of a pipeline whose batch count it does
    not know (the bucketed one): the call that finds the epoch's iterator exhausted still increments the
    counter (an op that reads no data) and does nothing else (no batch-end callback, weights unchanged).
    Everything that reads the counter (summary.json's `optimizer_steps`, the checkpoint's step, the
    learning-rate schedule, the cool-down, the epoch curves' x axis) would then run one ahead per epoch.
    Batch ends are the updates; this callback counts them and puts the count back before any other
    callback's `on_epoch_end` reads it (it comes first in the run's list).
    """

    def __init__(self):
        super().__init__()
        self.updates = 0  # in all, resumed runs included (`StepBudget` reads it)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.updates = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.updates += 1

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        counter = self.model.optimizer.iterations
        if int(keras.ops.convert_to_numpy(counter)) != self.updates:
            counter.assign(self.updates)
