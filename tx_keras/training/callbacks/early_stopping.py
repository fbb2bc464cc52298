"""Stop training when the validation score has stopped improving, or once the task is learned."""

from __future__ import annotations

import math

import keras

# The epoch logs (and so the checkpoint) carry the stopper's state, so a resumed run stops where the
# uninterrupted one would have: the best value so far, the epochs waited since, and whether it stopped.
BEST_KEY = "early_stopping_best"
WAIT_KEY = "early_stopping_wait"
STOPPED_KEY = "early_stopping_stopped"


def _lower_is_better(monitor: str) -> bool:
    return monitor.endswith("loss")


class EarlyStopping(keras.callbacks.Callback):
    """Keras' EarlyStopping convention (patience, min_delta, no weights restored) plus Lightning's
    `stopping_threshold` as `stop_at`: training ends after `patience` epochs in which `monitor` did not
    improve by more than `min_delta`, or right after the epoch in which it reached `stop_at`.

    Nothing is restored: the model is the one of the last epoch trained, as without early stopping, and
    that is what the run evaluates, checkpoints and exports. `state` is what a resumed run passes back
    from its checkpoint's logs. Put it after the callbacks that add `monitor` to the logs (validation
    exact-match) and after TensorBoard (its state keys are no curves), before the checkpoint.
    """

    def __init__(
        self,
        monitor: str,
        patience: int,
        epochs: int,
        min_delta: float = 0.0,
        stop_at: float | None = None,
        state: dict[str, float] | None = None,
    ):
        super().__init__()
        self.monitor, self.patience, self.epochs = monitor, patience, epochs
        self.min_delta, self.stop_at = min_delta, stop_at
        state = state or {}
        self.sign = -1.0 if _lower_is_better(monitor) else 1.0  # compare sign * value: higher is better
        self.best = float(state.get(BEST_KEY, -math.inf))
        self.wait = int(state.get(WAIT_KEY, 0))
        self.stopped = bool(state.get(STOPPED_KEY, 0.0))
        self.reason: str | None = None

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs if logs is not None else {}
        if self.monitor not in logs:
            known = ", ".join(sorted(logs))
            raise KeyError(f"trainer.early_stopping.monitor={self.monitor} is not an epoch log ({known})")
        value = float(logs[self.monitor])
        score = self.sign * value
        if math.isfinite(score) and score > self.best + self.min_delta:
            self.best, self.wait = score, 0
        else:
            self.wait += 1
        last = epoch + 1 >= self.epochs  # the planned end: no early stop to report
        if self.stop_at is not None and self.sign * value >= self.sign * self.stop_at and not last:
            self.reason = f"early stopping: {self.monitor} reached {value:.4g} (stop_at={self.stop_at:g})"
        elif self.wait >= self.patience and not last:
            self.reason = (
                f"early stopping: no improvement in {self.monitor} for {self.wait} epochs "
                f"(best {self.sign * self.best:.4g}; patience={self.patience})"
            )
        if self.reason:
            self.stopped = True
            self.model.stop_training = True
        logs.update({BEST_KEY: self.best, WAIT_KEY: float(self.wait), STOPPED_KEY: float(self.stopped)})
