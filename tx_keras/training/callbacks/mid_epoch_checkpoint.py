"""Checkpoints inside an epoch, for a stop signal (preemption) and every `trainer.checkpoint_every_minutes`,
and the exact continuation of an epoch from one.

A checkpoint is written between two steps: the state after `batch` batches of the epoch (weights,
optimizer, the metrics' running totals, the time budget spent, the per-step loss curve's open window), so
that the resumed epoch trains exactly the batches that were left, in the same order, and ends with the
same logs as an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import keras
import numpy as np

from tx_keras.data.batching.input_batches import pipeline_counter
from tx_keras.run_folder.checkpoint import Checkpoint, restore_metrics, save_checkpoint
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint
from tx_keras.training.callbacks.live_state import sync_variables
from tx_keras.training.processes import stop_signals
from tx_keras.training.processes.stop_signals import Interrupted


class MidEpochCheckpoint(keras.callbacks.Callback):
    """Stops training at the next step boundary after SIGTERM/SIGINT (stop_signals.py) with a checkpoint,
    writes one every `every_minutes` when set, and continues from `resume` when it was taken mid-epoch.

    Callbacks with `mid_epoch_state()` (a dict of floats) have it saved in such a checkpoint's logs and
    get it back through `restore_mid_epoch_state(logs)` as the resumed epoch begins.

    Put it last in the callback list: at an epoch's end the epoch checkpoint is on disk before it acts,
    and it sees the stop requests other callbacks make at a batch's end. `enabled=False`
    (`trainer.checkpoint_every=0` without minutes) stops on a signal without writing anything.
    """

    def __init__(self, path: Path, resume: Checkpoint | None, every_minutes: float | None, enabled: bool):
        super().__init__()
        self.path, self.enabled = path, enabled
        self.every_s = 60.0 * every_minutes if every_minutes else None
        self._resume = resume if resume is not None and resume.batch else None
        # The batches of the resumed epoch to leave out: give it to the training dataset (make_dataset's
        # `skip`); None when this run does not start inside an epoch.
        self.skip = pipeline_counter(0) if self._resume else None
        self._logs: dict[str, float] = dict(resume.logs) if resume is not None else {}
        self._done = resume.epoch if resume is not None else 0  # completed epochs
        self._callbacks: list[keras.callbacks.Callback] = []
        self._dataset = None  # tf.data.Dataset or data.batching.numpy_batches.NumpyBatches
        self._signals: stop_signals.StopSignals | None = None
        self._epoch_checkpoint: EpochCheckpoint | None = None
        self._stateful: list[keras.callbacks.Callback] = []
        self._offset = 0  # batches of the current epoch trained before this process started
        self._remaining: int | None = None  # batches left in the resumed epoch
        self._cut = False  # this callback ended the resumed epoch (not a time budget or NaN)
        self._saved_at = time.monotonic()

    def watch(self, callbacks: list[keras.callbacks.Callback], dataset) -> None:
        """The run's callbacks (read once training begins, when the list is complete) and its training
        dataset (built with `skip`)."""
        self._callbacks, self._dataset = callbacks, dataset

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._signals = stop_signals.active()
        if self._signals is not None:
            self._signals.training = True
        self._epoch_checkpoint = next((c for c in self._callbacks if isinstance(c, EpochCheckpoint)), None)
        self._stateful = [c for c in self._callbacks if hasattr(c, "mid_epoch_state")]
        self._saved_at = time.monotonic()
        if self._resume is not None:  # Keras builds compiled metrics in the first step: build them now
            inputs, labels = next(iter(self._dataset))
            self.model.compute_metrics(inputs, labels, self.model(inputs, training=False))

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._offset, self._remaining = 0, None
        resume, self._resume = self._resume, None
        if self.skip is not None:
            self.skip.assign(resume.batch if resume is not None else 0)
        if resume is None:
            return
        restore_metrics(self.model, resume, self.path)  # after Keras reset them for this epoch
        for callback in self._stateful:
            callback.restore_mid_epoch_state(resume.logs)
        self._offset = resume.batch
        # Ended by hand at its last batch: Keras would otherwise look for its end one step later (a step
        # that advances dropout seeds) or, on a dataset of unknown length, take this short epoch's length
        # for every later epoch's. Bucketed batches declare no length: counted.
        length = int(self._dataset.cardinality())
        self._remaining = (
            length - resume.batch
            if length >= 0
            else int(self._dataset.reduce(np.int64(0), lambda count, _: count + 1))
        )

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        position = self._offset + batch
        if self._stop_requested():
            self._stop(position)
        if self.every_s is not None and position and time.monotonic() - self._saved_at >= self.every_s:
            self._save(position)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self._remaining is not None and batch + 1 >= self._remaining and not self.model.stop_training:
            self.model.stop_training = True
            self._cut = True

    def on_test_begin(self, logs: dict | None = None) -> None:
        self._uncut()  # before the epoch-end callbacks, which may stop training for their own reasons

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._uncut()  # (no validation ran)
        self._logs = dict(logs or {})
        self._done, self._offset, self._remaining = epoch + 1, 0, None
        if self._epoch_checkpoint is not None and self._epoch_checkpoint.saved == self._done:
            self._saved_at = time.monotonic()
        if self._stop_requested():
            self._stop(0)

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._signals is not None:
            self._signals.training = False
        if self._stop_requested():  # e.g. during the head-importance pass after the last epoch
            self._stop(0)

    def _uncut(self) -> None:
        if self._cut:
            self.model.stop_training = self._cut = False

    def _stop_requested(self) -> bool:
        return self._signals is not None and self._signals.received is not None

    def _save(self, position: int) -> bool:
        """A checkpoint after `self._done` epochs and `position` batches; False when none was written."""
        if self._epoch_checkpoint is not None:
            self._epoch_checkpoint.flush()  # its write, in flight, must not land after this newer one
        if not self.enabled or not all(math.isfinite(float(value)) for value in self._logs.values()):
            return False
        sync_variables(self.model)
        if position:
            logs = dict(self._logs)
            for callback in self._stateful:
                logs.update(callback.mid_epoch_state())
            save_checkpoint(self.path, self.model, self._done, logs, batch=position)
        elif self._epoch_checkpoint is None or self._epoch_checkpoint.saved != self._done:
            save_checkpoint(self.path, self.model, self._done, self._logs)
        self._saved_at = time.monotonic()
        return True

    def _stop(self, position: int) -> None:
        """Save where training stands, then end it with `Interrupted`."""
        where = (
            f"in epoch {self._done + 1} after {position} of its batches"
            if position
            else (f"after epoch {self._done}" if self._done else "before the first step")
        )
        if position or self._done:
            saved = "checkpoint saved" if self._save(position) else "no checkpoint (off, or a NaN loss)"
        else:
            saved = "nothing trained yet"
        raise Interrupted(self._signals.received, f"{where}; {saved}")
