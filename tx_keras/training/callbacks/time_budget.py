"""Stop training after a budget of wall-clock time, for runs that must fit a slot (a 30-minute CPU job), or
of CPU time, for trials that must get the same work whatever else shares the machine.

A wall-clock budget on a loaded machine gives a run fewer steps and ranks it by its neighbours; the
process's CPU time (every thread, and data workers that are processes of their own) counts only the work
this run did, so `trainer.max_train_cpu_minutes` compares trials of a search fairly on a shared host.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import keras

SPENT_KEY = "train_minutes"  # the epoch logs' (and so the checkpoint's) wall-clock budget spent so far
CPU_SPENT_KEY = "train_cpu_minutes"  # the same for the CPU-time budget


def process_cpu_seconds() -> float:
    """CPU seconds this process has used, all its threads and its finished child processes (user and
    kernel time alike)."""
    used = os.times()
    return used.user + used.system + used.children_user + used.children_system


class TimeBudget(keras.callbacks.Callback):
    """Ends training after the first batch that finishes past `minutes` of training on `clock`.

    The budget is the run's, not the process's: each epoch's logs (and so its checkpoint) carry the
    minutes spent under `key`, and a resumed run passes them back as `spent_minutes`, so a killed run ends
    at the same total training time. The epoch in progress is cut short, then validated and checkpointed
    as usual; `reached` tells the run to record why it stopped. `TimeBudget.cpu` counts CPU time instead.
    """

    def __init__(
        self,
        minutes: float,
        spent_minutes: float = 0.0,
        clock: Callable[[], float] | None = None,
        key: str = SPENT_KEY,
    ):
        super().__init__()
        self.seconds = 60.0 * minutes
        self.spent = 60.0 * spent_minutes
        self.clock, self.key = clock or time.monotonic, key  # None: the wall clock
        self.reached = False
        self._start = self.clock()

    @classmethod
    def cpu(cls, minutes: float, spent_minutes: float = 0.0) -> TimeBudget:
        """A budget of the process's CPU time (`trainer.max_train_cpu_minutes`)."""
        return cls(minutes, spent_minutes, process_cpu_seconds, CPU_SPENT_KEY)

    def elapsed(self) -> float:
        """Seconds of training so far, earlier processes of this run included."""
        return self.spent + self.clock() - self._start

    def progress(self) -> float:
        """The share of the budget used, 0..1 (and past 1 in the last step)."""
        return self.elapsed() / self.seconds

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._start = self.clock()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.elapsed() > self.seconds:
            self.reached = True
            self.model.stop_training = True

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            logs[self.key] = self.elapsed() / 60.0

    def mid_epoch_state(self) -> dict[str, float]:
        """For a checkpoint taken inside an epoch: the minutes spent up to that step."""
        return {self.key: self.elapsed() / 60.0}

    def restore_mid_epoch_state(self, logs: dict[str, float]) -> None:
        """Nothing to do: the run passes the checkpoint's minutes in as `spent_minutes`."""
