"""Which epochs a dashboard callback logs: the chosen ones, and the last one trained however training ends."""

from __future__ import annotations


class LoggedEpochs:
    """Tracks the completed-epoch counts a callback logs.

    `chosen` comes from the config (`epochs_to_log`), whose `first_last` takes `trainer.epochs` as the
    last epoch: an upper bound that a run ended by its time budget or by early stopping never reaches.
    So the epoch training actually ended with is logged too, at the end of training.
    """

    def __init__(self, chosen: set[int]):
        self.chosen = chosen
        self.last: int | None = None  # completed epochs when the latest epoch ended
        self.logged: set[int] = set()

    def epoch_ended(self, epoch: int) -> bool:
        """Epoch index `epoch` (0-based, as Keras counts) has ended: True when it is to be logged now."""
        self.last = epoch + 1
        if self.last not in self.chosen:
            return False
        self.logged.add(self.last)
        return True

    def training_ended(self) -> int | None:
        """The last trained epoch when it still has to be logged; None when it was, when no epoch ended
        in this process (a resumed run that had already stopped), or when logging is off."""
        if not self.chosen or self.last is None or self.last in self.logged:
            return None
        self.logged.add(self.last)
        return self.last
