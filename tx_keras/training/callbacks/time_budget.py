"""Stop training after a wall-clock budget, for runs that must fit a slot (a 30-minute CPU job)."""

from __future__ import annotations

import time

import keras

SPENT_KEY = "train_minutes"  # the epoch logs' (and so the checkpoint's) budget spent so far


class TimeBudget(keras.callbacks.Callback):
    """Ends training after the first batch that finishes past `minutes` of training.

    The budget is the run's, not the process's: each epoch's logs (and so its checkpoint) carry the
    minutes spent, and a resumed run passes them back as `spent_minutes`, so a killed run ends at the
    same total training time. The epoch in progress is cut short, then validated and checkpointed as
    usual; `reached` tells the run to record why it stopped.
    """

    def __init__(self, minutes: float, spent_minutes: float = 0.0):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.spent = 60.0 * spent_minutes
        self.reached = False
        self._start = time.monotonic()

    def elapsed(self) -> float:
        """Seconds of training so far, earlier processes of this run included."""
        return self.spent + time.monotonic() - self._start

    def progress(self) -> float:
        """The share of the budget used, 0..1 (and past 1 in the last step)."""
        return self.elapsed() / self.seconds

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._start = time.monotonic()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.elapsed() > self.seconds:
            self.reached = True
            self.model.stop_training = True

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            logs[SPENT_KEY] = self.elapsed() / 60.0

    def mid_epoch_state(self) -> dict[str, float]:
        """For a checkpoint taken inside an epoch: the minutes spent up to that step."""
        return {SPENT_KEY: self.elapsed() / 60.0}

    def restore_mid_epoch_state(self, logs: dict[str, float]) -> None:
        """Nothing to do: the run passes the checkpoint's minutes in as `spent_minutes`."""
