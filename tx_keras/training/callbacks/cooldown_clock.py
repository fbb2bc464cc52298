"""Drives a `Cooldown` schedule's factor from how much of the training is done."""

from __future__ import annotations

import keras

from tx_keras.training.callbacks.live_state import sync_variables
from tx_keras.training.callbacks.time_budget import TimeBudget
from tx_keras.training.callbacks.update_count import UpdateCount
from tx_keras.training.step.learning_rate import Cooldown


class CooldownClock(keras.callbacks.Callback):
    """Before every step, sets the cool-down from the share of training done: of the planned steps
    (`epochs * steps_per_epoch`, or `max_steps` when that step budget comes first; counted on from the
    optimizer's step counter a checkpoint keeps, so a resumed run continues the decay where it stopped)
    or, when there is a time budget and it will end training first, of the budget (so the rate reaches 0
    just as the budget stops training, however fast the host is). The steps done are the run's
    `UpdateCount`'s (which comes before this callback in the run's list), not a read of the optimizer's
    counter before every step.
    """

    def __init__(
        self,
        cooldown: Cooldown,
        budget: TimeBudget | None,
        count: UpdateCount,
        epochs: int,
        steps_per_epoch: int,
        max_steps: int | None = None,
    ):
        super().__init__()
        self.cooldown, self.budget, self.count = cooldown, budget, count
        planned = epochs * steps_per_epoch
        self.planned_steps = max(1, min(planned, max_steps) if max_steps else planned)
        # The factor last set: reading the step and assigning the factor before every step cost ~0.4 ms of
        # a tatoeba_small step on the main thread while the other core idled; before the cool-down begins
        # the factor stays 1 and is not assigned again.
        self._factor: float | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._factor = None  # a restored checkpoint may have set the variable since the last fit

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        progress = self.count.updates / self.planned_steps
        if self.budget is not None:
            progress = max(progress, self.budget.progress())
        factor = self.cooldown.factor_at(progress)
        if factor != self._factor:
            sync_variables(self.model)  # JAX: the next step reads its state, this factor included, anew
            self.cooldown.factor.assign(factor)
            self._factor = factor
