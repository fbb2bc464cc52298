"""Save the run's checkpoint at the end of every `every`-th epoch (run_folder/checkpoint.py's format),
written while the next epoch trains (run_folder/background_checkpoint.py)."""

from __future__ import annotations

import math
from pathlib import Path

import keras

from tx_keras.run_folder.background_checkpoint import BackgroundCheckpoint


class EpochCheckpoint(keras.callbacks.Callback):
    """Saves a checkpoint every `every` epochs and after the last one, unless the epoch's loss is NaN/inf.

    Put it after the logging callbacks: by the time an epoch is checkpointed its curves are on disk.
    The file is on disk when training ends (`on_train_end`) or after `flush()`.
    """

    def __init__(self, path: Path, every: int, epochs: int):
        super().__init__()
        self.path, self.every, self.epochs = path, every, epochs
        self.saved: int | None = None  # the completed epochs of the last checkpoint saved here
        self._writer = BackgroundCheckpoint(path)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        done = epoch + 1
        if done % self.every and done != self.epochs and not self.model.stop_training:
            return  # the epoch training stops after (early stopping, time budget) is always checkpointed
        if not all(math.isfinite(float(value)) for value in logs.values()):
            return  # a diverged epoch is no state to continue from
        self._writer.save(self.model, done, logs)
        self.saved = done

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._writer.check()  # a checkpoint that failed to write ends the run now, not an epoch later

    def on_train_end(self, logs: dict | None = None) -> None:
        self.flush()

    def flush(self) -> None:
        """Wait until the last checkpoint saved here is on disk (raising its write's error, if any)."""
        self._writer.flush()
