"""Stop training after a wall-clock budget, for runs that must fit a slot (a 30-minute CPU job)."""

from __future__ import annotations

import time

import keras


class TimeBudget(keras.callbacks.Callback):
    """Ends training after the first batch that finishes past `minutes` of training in this process.

    The epoch in progress is cut short, then validated and checkpointed as usual; `reached` tells the
    run to record why it stopped. The learning-rate schedule depends on the step only, so a budget
    stops a run without leaving its schedule half-way through a planned decay.
    """

    def __init__(self, minutes: float):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.reached = False
        self._start = 0.0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._start = time.monotonic()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if time.monotonic() - self._start > self.seconds:
            self.reached = True
            self.model.stop_training = True
