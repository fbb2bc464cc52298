"""Signs of life during training: a live bar in a terminal, a line every half minute in a log file."""

from __future__ import annotations

import logging
import time

import keras
from tqdm import tqdm

from tx_keras.training.callbacks.step_budget import StepBudget
from tx_keras.training.callbacks.time_budget import TimeBudget
from tx_keras.training.run.stage import clock

_LOG = logging.getLogger("tx_keras.progress")
# The epoch-log keys worth a user's eye, in this order; the rest (state for resuming) stay out.
_SHOWN = ("loss", "accuracy", "val_loss", "val_accuracy", "val_exact_match")


class Progress(keras.callbacks.Callback):
    """Per step: step/total, loss, tokens/s, the time left for the run and, with a time budget, for the
    budget. In a terminal (`terminal=True`) that is a tqdm bar; otherwise a line at most every `every_s`
    seconds, so a CI log or `nohup` file shows the run is alive. One line per epoch with its metrics.

    `verbose` is `logging.verbose`: at 0 every line still goes to the log file (DEBUG), none to the
    console. Lines a terminal shows as a bar go to the log file too, as DEBUG lines.
    """

    def __init__(
        self,
        epochs: int,
        steps_per_epoch: int,
        tokens_per_step: float,
        every_s: float,
        terminal: bool,
        verbose: int,
        budget: TimeBudget | None = None,
        step_budget: StepBudget | None = None,
    ):
        super().__init__()
        self.epochs, self.steps, self.tokens_per_step = epochs, max(1, steps_per_epoch), tokens_per_step
        self.every_s, self.verbose, self.budget, self.step_budget = every_s, verbose, budget, step_budget
        self.bar_wanted = terminal and verbose >= 1
        self._bar: tqdm | None = None
        self._epoch = 0
        self._epoch_start = self._last_line = self._first_step_end = time.monotonic()
        self._stepped = False  # whether this process has finished a step: its first one gets a line

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch = epoch
        self._epoch_start = self._last_line = time.monotonic()
        if self.bar_wanted:
            self._bar = tqdm(
                total=self.steps,
                desc=f"epoch {epoch + 1}/{self.epochs}",
                unit="step",
                leave=False,
                dynamic_ncols=True,
                mininterval=0.5,
            )

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        step = batch + 1
        if step == 1:  # rates count from the end of each epoch's first step (the run's first one traces)
            self._first_step_end = time.monotonic()
        status = self._status(step, logs or {})
        if self._bar is not None:
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(1)
        now = time.monotonic()
        if not self._stepped:  # the time to the first step (a start-up figure): its log line's time stamp
            self._stepped = True
            level = logging.DEBUG if self._bar is not None or self.verbose < 1 else logging.INFO
            _LOG.log(level, f"first training step done ({clock(now - self._epoch_start)} with its trace)")
        if now - self._last_line >= self.every_s:
            self._last_line = now
            line = f"epoch {self._epoch + 1}/{self.epochs} step {step}/{self.steps}: {status}"
            level = logging.DEBUG if self._bar is not None or self.verbose < 1 else logging.INFO
            _LOG.log(level, line)

    def _status(self, step: int, logs: dict) -> str:
        if step > 1:
            elapsed, counted = max(time.monotonic() - self._first_step_end, 1e-9), step - 1
        else:
            elapsed, counted = max(time.monotonic() - self._epoch_start, 1e-9), 1
        per_step = elapsed / counted
        steps_left = max(self.steps - step, 0) + self.steps * (self.epochs - self._epoch - 1)
        if self.step_budget is not None:
            steps_left = min(steps_left, self.step_budget.steps_left())
        parts = []
        if "loss" in logs:
            parts.append(f"loss {float(logs['loss']):.4f}")
        parts.append(f"{self.tokens_per_step * counted / elapsed:,.0f} tok/s")
        left = steps_left * per_step
        if self.budget is not None:
            budget_left = self.budget.seconds - self.budget.elapsed()
            left = min(left, budget_left)
            parts.append(f"budget left {clock(budget_left)}")
        parts.append(f"run ETA {clock(left)}")
        return ", ".join(parts)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        logs = logs or {}
        shown = " ".join(f"{key} {float(logs[key]):.4g}" for key in _SHOWN if key in logs)
        took = clock(time.monotonic() - self._epoch_start)
        _LOG.log(
            logging.INFO if self.verbose >= 1 else logging.DEBUG,
            f"epoch {epoch + 1}/{self.epochs} ({took}): {shown}",
        )

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._bar is not None:  # training stopped inside an epoch (time budget)
            self._bar.close()
            self._bar = None
