"""Preemption: SIGTERM/SIGINT stop training at the next step with a mid-epoch checkpoint, and the resumed
epoch trains exactly the batches that were left, so the run ends as if it had never stopped."""

import os
import signal
import subprocess
import sys
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.event_points import event_points
from tx_keras.data import make_dataset
from tx_keras.run_folder.checkpoint import load_checkpoint, restore
from tx_keras.run_folder.resume import STEP_LOSS_TAG
from tx_keras.training.callbacks.epoch_scalars import EpochScalars
from tx_keras.training.callbacks.epoch_variable import EpochVariable
from tx_keras.training.callbacks.live_state import sync_variables
from tx_keras.training.callbacks.mid_epoch_checkpoint import MidEpochCheckpoint
from tx_keras.training.callbacks.time_budget import SPENT_KEY, TimeBudget
from tx_keras.training.processes.stop_signals import Interrupted, StopSignals
from tx_keras.training.step.masked_accuracy import MaskedAccuracy
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.token_mean_loss import TokenMeanLoss

VOCAB, LENGTH, ROWS, BATCH, EPOCHS = 12, 6, 80, 8, 2  # 10 steps an epoch
STEPS = ROWS // BATCH


def _data():
    rng = np.random.default_rng(0)
    source = rng.integers(1, VOCAB, size=(ROWS, LENGTH)).astype("int32")
    target = rng.integers(1, VOCAB, size=(ROWS, LENGTH)).astype("int32")
    target[:, -2:] = 0  # padding: the metrics count real tokens only
    return source, target


def _model(seed):
    keras.utils.set_random_seed(seed)
    source, decoder = keras.Input((LENGTH,), dtype="int32"), keras.Input((LENGTH - 1,), dtype="int32")
    hidden = keras.layers.Dropout(0.3)(keras.layers.Embedding(VOCAB, 8)(decoder))  # a seed state to keep
    model = keras.Model([source, decoder], keras.layers.Dense(VOCAB)(hidden))
    model.compile(
        keras.optimizers.Adam(1e-2), MaskedCrossEntropy(), metrics=[TokenMeanLoss(), MaskedAccuracy()]
    )
    model.optimizer.build(model.trainable_variables)
    return model


def _fit(model, folder, checkpoint=None, extra=(), batching="fixed"):
    """fit() as training/run/orchestrator.py wires it: the epoch variable drives the order, the mid-epoch
    callback last."""
    initial = checkpoint.epoch if checkpoint else 0
    epoch = tf.Variable(initial, dtype=tf.int64, trainable=False)
    mid_epoch = MidEpochCheckpoint(folder / "last.npz", checkpoint, None, enabled=True)
    train = make_dataset(*_data(), BATCH, True, seed=3, epoch=epoch, batching=batching, skip=mid_epoch.skip)
    callbacks = [EpochVariable(epoch), EpochScalars(folder, loss_every_steps=3), *extra]
    mid_epoch.watch(callbacks, train)
    callbacks.append(mid_epoch)
    history = model.fit(train, initial_epoch=initial, epochs=EPOCHS, callbacks=callbacks, verbose=0)
    return history.history


class _SignalAt(keras.callbacks.Callback):
    """Sends this process `number` during the step that ends at optimizer step `step`."""

    def __init__(self, step, number=signal.SIGTERM):
        super().__init__()
        self.step, self.number = step, number

    def on_train_batch_end(self, batch, logs=None):
        sync_variables(self.model)  # JAX: the step count of the step just taken
        if int(keras.ops.convert_to_numpy(self.model.optimizer.iterations)) == self.step:
            os.kill(os.getpid(), self.number)


@pytest.mark.parametrize(
    ("number", "batching"), [(signal.SIGTERM, "fixed"), (signal.SIGINT, "fixed"), (signal.SIGTERM, "bucket")]
)
def test_a_signal_mid_epoch_checkpoints_and_the_resume_ends_equal(tmp_path, number, batching):
    straight = _model(0)
    expected = _fit(straight, tmp_path / "straight", batching=batching)
    # bucketed batches are more than 10
    steps = int(keras.ops.convert_to_numpy(straight.optimizer.iterations)) // EPOCHS

    stopped = _model(0)
    expected_line = r"in epoch 2 after 3 of its batches; checkpoint saved"
    with StopSignals(), pytest.raises(Interrupted, match=expected_line):
        budget = TimeBudget(minutes=60.0, spent_minutes=2.0)  # as if resumed once already
        _fit(stopped, tmp_path / "run", extra=[budget, _SignalAt(steps + 3, number)], batching=batching)
    checkpoint = load_checkpoint(tmp_path / "run" / "last.npz")
    assert (checkpoint.epoch, checkpoint.batch, checkpoint.step) == (1, 3, steps + 3)  # no step lost
    assert 2.0 < checkpoint.logs[SPENT_KEY] < 3.0  # the budget spent up to that step
    assert len(checkpoint.metrics) == len(stopped.metrics_variables)

    resumed = _model(1)  # other weights and dropout seeds: all must come from the checkpoint
    restore(resumed, checkpoint, tmp_path / "run" / "last.npz")
    # The per-step loss curve as a resume leaves it: the points up to the checkpoint's step (resume.py).
    history = _fit(resumed, tmp_path / "run", checkpoint, batching=batching)
    # Bucketed epochs declare no length: Keras finds each one's end with a step past it that trains nothing
    # but advances the dropout seeds (and the optimizer's counter); the resumed epoch, ended at its last
    # batch, lacks that step (docs/configuring.md). Interrupted in the last epoch, the weights are equal.
    compared = straight.variables if batching == "fixed" else straight.trainable_variables
    others = resumed.variables if batching == "fixed" else resumed.trainable_variables
    for a, b in zip(compared, others, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # The resumed epoch's logs are the whole epoch's, not those of the batches left.
    assert {key: values[-1] for key, values in history.items()} == {k: v[-1] for k, v in expected.items()}
    # Every curve point once, with the uninterrupted run's values (the per-step loss included: its
    # window open at the signal was carried over).
    points = event_points(tmp_path / "run" / "train")
    assert sorted(points) == sorted(event_points(tmp_path / "straight" / "train"))
    assert len([point for point in points if point[0] == STEP_LOSS_TAG]) >= 2 * (steps // 3)


def test_a_signal_at_an_epochs_end_stops_after_it_with_its_checkpoint(tmp_path):
    model = _model(0)
    with StopSignals(), pytest.raises(Interrupted, match=r"after epoch 1; checkpoint saved"):
        _fit(model, tmp_path, extra=[_SignalAt(STEPS)])  # during the epoch's last step
    checkpoint = load_checkpoint(tmp_path / "last.npz")
    assert (checkpoint.epoch, checkpoint.batch, checkpoint.step) == (1, 0, STEPS)
    assert "loss" in checkpoint.logs and not checkpoint.metrics


def test_outside_training_a_signal_stops_at_once_and_restores_the_handlers():
    before = signal.getsignal(signal.SIGTERM)
    expected_line = "SIGTERM outside training; the last checkpoint stays"
    with pytest.raises(Interrupted, match=expected_line), StopSignals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises first
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_second_signal_exits_at_once():
    code = (
        "import os, signal, time\n"
        "from tx_keras.training.processes.stop_signals import StopSignals\n"
        "with StopSignals() as signals:\n"
        "    signals.training = True\n"  # the first one only asks for a stop at the next step
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(0.1)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        "print('not reached')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 128 + signal.SIGTERM and result.stdout == ""
    assert result.stderr == "tx-train: second SIGTERM: stopping at once, without a checkpoint\n"


def test_checkpoints_every_n_minutes_land_inside_epochs_and_resume_equal(tmp_path):
    straight = _model(0)
    _fit(straight, tmp_path / "straight")

    timed = _model(0)
    epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
    train = make_dataset(*_data(), BATCH, shuffle=True, seed=3, epoch=epoch)
    callbacks = [EpochVariable(epoch)]
    saved = []

    class Watch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            checkpoint = load_checkpoint(tmp_path / "last.npz")
            saved.append(None if checkpoint is None else (checkpoint.epoch, checkpoint.batch))

    callbacks.append(Watch())
    mid_epoch = MidEpochCheckpoint(tmp_path / "last.npz", None, 1e-9, enabled=True)
    mid_epoch.watch(callbacks, train)
    callbacks.append(mid_epoch)
    timed.fit(train, epochs=1, callbacks=callbacks, verbose=0)
    # Due before every step but the epoch's first: written between steps, never at an epoch's end.
    assert saved == [None] + [(0, batch) for batch in range(1, STEPS)]

    checkpoint = load_checkpoint(tmp_path / "last.npz")  # as if killed -9 during the last step
    resumed = _model(1)
    restore(resumed, checkpoint, tmp_path / "last.npz")
    _fit(resumed, tmp_path / "run", checkpoint)
    for a, b in zip(straight.variables, resumed.variables, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
