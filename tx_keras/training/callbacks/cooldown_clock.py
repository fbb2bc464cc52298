"""Drives a `Cooldown` schedule's factor from how much of the training is done."""

from __future__ import annotations

import keras

from tx_keras.training.callbacks.live_state import sync_variables
from tx_keras.training.callbacks.time_budget import TimeBudget
from tx_keras.training.learning_rate import Cooldown


class CooldownClock(keras.callbacks.Callback):
    """Before every step, sets the cool-down from the share of training done: of the planned steps
    (`epochs * steps_per_epoch`, or `max_steps` when that step budget comes first; counted by the
    optimizer, so a resumed run continues the decay where it stopped) or, when there is a time budget and
    it will end training first, of the budget (so the rate reaches 0 just as the budget stops training,
    however fast the host is).
    """

    def __init__(
        self,
        cooldown: Cooldown,
        budget: TimeBudget | None,
        epochs: int,
        steps_per_epoch: int,
        max_steps: int | None = None,
    ):
        super().__init__()
        self.cooldown, self.budget = cooldown, budget
        planned = epochs * steps_per_epoch
        self.planned_steps = max(1, min(planned, max_steps) if max_steps else planned)

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        sync_variables(self.model)  # JAX: the step count now, and the next step reads the factor set here
        progress = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations)) / self.planned_steps
        if self.budget is not None:
            progress = max(progress, self.budget.progress())
        self.cooldown.set_progress(progress)
