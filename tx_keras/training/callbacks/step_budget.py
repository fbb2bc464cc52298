"""Ends training after a set number of optimizer steps: the budget that means the same on every host."""

from __future__ import annotations

import keras

from tx_keras.training.callbacks.update_count import UpdateCount


class StepBudget(keras.callbacks.Callback):
    """Stops `fit` once the optimizer has taken `steps` updates in all.

    A time budget (`TimeBudget`) gives a slow or loaded host fewer updates, so two runs compared across
    machines, or beside other work, did not train alike; a step budget gives every host the same updates and
    the same cool-down (`CooldownClock` plans over it). It reads the run's `UpdateCount`, which starts from
    the optimizer's step counter that a checkpoint keeps, so a resumed run ends at the same step. The epoch in
    progress is cut short, then validated and checkpointed as usual; `reached` tells the run to record why it
    stopped.
    """

    def __init__(self, steps: int, count: UpdateCount):
        super().__init__()
        self.steps = steps
        self.count = count  # comes before this callback in the run's list, so it has counted the batch
        self.reached = False

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.count.updates >= self.steps:
            self.reached = True
            self.model.stop_training = True

    def steps_left(self) -> int:
        """Updates still to take (the progress line's time left counts these, not the epochs')."""
        return max(self.steps - self.count.updates, 0)
