"""Ends training after a set number of optimizer steps: the budget that means the same on every host."""

from __future__ import annotations

import keras


class StepBudget(keras.callbacks.Callback):
    """Stops `fit` once the optimizer has taken `steps` updates in all.

    A time budget (`TimeBudget`) gives a slow or loaded host fewer updates, so two runs compared across
    machines, or beside other work, did not train alike; a step budget gives every host the same updates
    and the same cool-down (`CooldownClock` plans over it). It counts the optimizer's own step counter,
    which a checkpoint keeps, so a resumed run ends at the same step. The epoch in progress is cut short,
    then validated and checkpointed as usual; `reached` tells the run to record why it stopped.
    """

    def __init__(self, steps: int):
        super().__init__()
        self.steps = steps
        self.reached = False
        self._done = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._done = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._done += 1
        if self._done >= self.steps:
            self.reached = True
            self.model.stop_training = True

    def steps_left(self) -> int:
        """Updates still to take (the progress line's time left counts these, not the epochs')."""
        return max(self.steps - self._done, 0)
