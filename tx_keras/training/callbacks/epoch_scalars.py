"""Each epoch's scores, and the training loss every few steps, as TensorBoard curves, written with
tf.summary's public API (or, without TensorFlow, TensorBoard's own writer: run_folder/scalar_writer.py)
and flushed at once."""

from __future__ import annotations

from pathlib import Path

import keras
from keras import ops

from tx_keras.run_folder.resume import STEP_LOSS_TAG
from tx_keras.run_folder.scalar_writer import ScalarWriter, scalar_writer
from tx_keras.training.callbacks.live_state import sync_variables

LEARNING_RATE_TAG = "optimizer/learning_rate"
# Validation exact-match (tx_keras/training/callbacks/validation_exact_match.py) is drawn in the accuracy
# group: `val_exact_match` becomes the validation run's `epoch_accuracy/exact_match`.
_RENAMED = {"val_exact_match": "val_accuracy/exact_match"}
_VALIDATION_PREFIX = "val_"
# The per-step loss's open window in a mid-epoch checkpoint's logs (callbacks/mid_epoch_checkpoint.py).
_WINDOW_KEYS = (
    "batch_loss_window_sum",
    "batch_loss_window_weight",
    "batch_loss_seen_total",
    "batch_loss_seen_count",
)


class EpochScalars(keras.callbacks.Callback):
    """The curves Keras' TensorBoard callback draws (`<run>/train` and `<run>/validation`, tags
    `epoch_<metric>`, step = epoch), written by us rather than by overriding that callback's private
    methods:

    - every epoch's points reach the disk before the epoch's checkpoint is taken (Keras' writers flush
      every two minutes: a run killed after a checkpoint would lose them, and its resume never writes them);
    - the learning rate is `optimizer/learning_rate`, not `epoch_learning_rate`: TensorBoard's Scalars tab
      sorts groups by name and opens the first two, so it opens on accuracy (token and sentence) and loss;
    - no `evaluation_<metric>_vs_iterations` copies of the validation curves;
    - with `loss_every_steps`, `batch_loss` (the name Keras' `update_freq` gives it) in `<run>/train`: the
      mean training loss of the steps since the previous point, a point every `loss_every_steps` optimizer
      steps and at each epoch's end, step = optimizer steps done. A run that stops after an epoch or two
      (early stopping) still draws a curve, and the epoch-end points make a resumed run's curve the same
      as an uninterrupted one's (checkpoints are taken at epoch ends). Keras' own `batch_loss` is the
      running mean since the epoch began, which hides late-epoch changes.
    """

    def __init__(self, log_dir: str | Path, loss_every_steps: int = 0) -> None:
        super().__init__()
        self._log_dir = Path(log_dir)
        self._writers: dict[str, ScalarWriter] = {}
        self.loss_every_steps = loss_every_steps
        self._window = [0.0, 0.0]  # weighted loss sum and weight of the steps since the last point
        self._loss_seen = (0.0, 0.0)  # the loss metric's (total, count) at the last read
        # Found at the first step's end, once: Keras builds the compiled metrics in the first step.
        self._loss: keras.metrics.Metric | None = None
        # Optimizer steps done: read as each epoch begins, counted by batch ends in between. Reading the
        # step and the loss totals from their variables after every step cost ~0.9 ms of a tatoeba_small
        # step on the main thread (the other core idle meanwhile); the totals are read where a point is due.
        self._step = 0
        # Inside fit's validation pass: Keras resets the compiled metrics for it and fills them with the
        # validation loss, so the epoch's training totals are read as it begins (`on_test_begin`) and not
        # read again until the next epoch.
        self._validating = False

    def _loss_metric(self) -> keras.metrics.Metric:
        """The metric behind the logs' `loss` (its `total` / `count` is the loss since the epoch began):
        the last of that name, so a compiled per-token loss (training/step/token_mean_loss.py), which replaces
        Keras' row-weighted tracker under that key, is read rather than the tracker."""
        flat: list[keras.metrics.Metric] = []
        for metric in self.model.metrics:  # the compiled metrics sit in one container metric
            flat += getattr(metric, "metrics", None) or [metric]
        return [metric for metric in flat if metric.name == "loss"][-1]

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._loss_seen = (0.0, 0.0)  # Keras resets its metrics as each epoch begins
        self._validating = False
        if self.loss_every_steps:
            sync_variables(self.model)
            self._step = self._optimizer_step()

    def mid_epoch_state(self) -> dict[str, float]:
        """For a checkpoint taken inside an epoch: the open window of the per-step loss (the steps since
        its last point) and the loss metric's totals it was read at, so the resumed run's next point
        averages the same steps as an uninterrupted run's."""
        self._read_loss()
        return dict(zip(_WINDOW_KEYS, (*self._window, *self._loss_seen), strict=True))

    def restore_mid_epoch_state(self, logs: dict[str, float]) -> None:
        """Called as the resumed epoch begins, once the loss metric holds its checkpointed totals."""
        if all(key in logs for key in _WINDOW_KEYS):
            weighted, weight, total, count = (float(logs[key]) for key in _WINDOW_KEYS)
            self._window, self._loss_seen = [weighted, weight], (total, count)

    def _optimizer_step(self) -> int:
        return int(ops.convert_to_numpy(self.model.optimizer.iterations))

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if not self.loss_every_steps:
            return
        if self._loss is None:
            self._loss = self._loss_metric()
        self._step += 1
        if self._step % self.loss_every_steps == 0:
            self._write_step_loss(self._step)

    def on_test_begin(self, logs: dict | None = None) -> None:
        self._read_loss()  # the epoch's last training steps, before validation reuses the metric
        self._validating = True

    def _read_loss(self) -> None:
        """Add the loss metric's totals since the last read to the open window."""
        if self._loss is None or self._validating:
            return
        sync_variables(self.model)
        total, count = (float(ops.convert_to_numpy(v)) for v in (self._loss.total, self._loss.count))
        self._window[0] += total - self._loss_seen[0]
        self._window[1] += count - self._loss_seen[1]
        self._loss_seen = (total, count)

    def _write_step_loss(self, step: int) -> None:
        self._read_loss()
        weighted, weight = self._window
        if not weight:
            return
        writer = self._writer("train")
        writer.scalar(STEP_LOSS_TAG, weighted / weight, step)
        writer.flush()  # a live view of a long epoch: each point on disk at once
        self._window = [0.0, 0.0]

    def _writer(self, split: str) -> ScalarWriter:
        if split not in self._writers:
            self._writers[split] = scalar_writer(self._log_dir / split)
        return self._writers[split]

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._loss is not None:
            self._write_step_loss(self._optimizer_step())  # the epoch's last steps, before its checkpoint
        curves: dict[str, dict[str, float]] = {"train": {}, "validation": {}}
        for key, value in (logs or {}).items():
            key = _RENAMED.get(key, key)
            if key == "learning_rate":
                continue
            if key.startswith(_VALIDATION_PREFIX):
                curves["validation"][f"epoch_{key[len(_VALIDATION_PREFIX) :]}"] = value
            else:
                curves["train"][f"epoch_{key}"] = value
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            curves["train"][LEARNING_RATE_TAG] = float(ops.convert_to_numpy(optimizer.learning_rate))
        for split, values in curves.items():
            if not values:
                continue
            writer = self._writer(split)
            for tag, value in values.items():
                writer.scalar(tag, value, epoch)
            writer.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
