"""Checkpoints written on a thread of their own while training goes on: the file holds the state of the
moment it was saved, and writes land in order (a write's error: tests/test_disk_faults.py)."""

import threading
import time

import keras
import numpy as np

from tx_keras.run_folder import checkpoint as checkpoint_module
from tx_keras.run_folder.background_checkpoint import BackgroundCheckpoint, _owned
from tx_keras.run_folder.checkpoint import load_checkpoint
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint
from tx_keras.training.callbacks.mid_epoch_checkpoint import MidEpochCheckpoint


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


def _slow_writes(monkeypatch, seconds=0.3):
    """Writes that take `seconds`, recording the thread each ran on."""
    threads, write = [], checkpoint_module.write_checkpoint

    def slow(path, state):
        threads.append(threading.current_thread().name)
        time.sleep(seconds)
        write(path, state)

    monkeypatch.setattr("tx_keras.run_folder.background_checkpoint.write_checkpoint", slow)
    return threads


def test_the_file_holds_the_state_saved_though_training_changed_it_meanwhile(tmp_path, monkeypatch):
    """The write waits for the test's word, so "returned before the write ended" is an order of events,
    not a time: a `save` that wrote before returning would return (after the wait's 10 s) with the write
    done."""
    threads, write = [], checkpoint_module.write_checkpoint
    begun, go_on, written = threading.Event(), threading.Event(), threading.Event()

    def held(path, state):
        threads.append(threading.current_thread().name)
        begun.set()
        go_on.wait(timeout=10)
        write(path, state)
        written.set()

    monkeypatch.setattr("tx_keras.run_folder.background_checkpoint.write_checkpoint", held)
    path = tmp_path / "run" / "checkpoints" / "last.npz"
    path.parent.parent.mkdir()
    model = _model()
    saved = [np.asarray(v).copy() for v in model.variables]
    writer = BackgroundCheckpoint(path)
    writer.save(model, 1, {"loss": 1.0})
    assert not written.is_set()  # save returned before the write ended
    assert begun.wait(timeout=10)  # and the write is under way, on its own thread
    for variable in model.variables:  # the next steps change the weights while the file is written
        variable.assign(variable + 1.0)
    go_on.set()
    writer.flush()
    assert written.is_set()  # flush waited for it
    checkpoint = load_checkpoint(path)
    assert threads == ["tx_keras checkpoint"]
    assert checkpoint.epoch == 1
    for got, want in zip(checkpoint.model, saved, strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_mid_epoch_checkpoint_lands_after_the_epoch_checkpoint_still_in_flight(tmp_path, monkeypatch):
    _slow_writes(monkeypatch)
    path = tmp_path / "run" / "checkpoints" / "last.npz"
    path.parent.parent.mkdir()
    model = _model()
    epoch_checkpoint = EpochCheckpoint(path, 1, 5)
    mid_epoch = MidEpochCheckpoint(path, None, 1e-9, enabled=True)
    for callback in (epoch_checkpoint, mid_epoch):
        callback.set_model(model)
    mid_epoch.watch([epoch_checkpoint, mid_epoch], None)
    mid_epoch.on_train_begin()
    epoch_checkpoint.on_epoch_end(0, {"loss": 1.0})  # written for 0.3 s from now
    mid_epoch.on_epoch_end(0, {"loss": 1.0})
    mid_epoch.on_epoch_begin(1)
    mid_epoch.on_train_batch_begin(3)  # every_minutes ~0: a checkpoint after 3 batches of epoch 2
    epoch_checkpoint.on_train_end()
    checkpoint = load_checkpoint(path)
    assert (checkpoint.epoch, checkpoint.batch) == (1, 3)  # the newer one, not overwritten by the older


def test_arrays_that_own_their_memory_are_not_copied_again_views_are():
    """TensorFlow's reads are copies already (kept: a second copy cost the first checkpoint ~0.17 s of page
    faults); a view of a backend's buffer (JAX's reads, which a step may donate) is copied."""
    owner = np.arange(4.0)
    assert _owned(owner) is owner
    buffer = np.arange(4.0)
    view = buffer[:]
    copied = _owned(view)
    buffer += 1.0  # the backend reuses its buffer
    assert copied.flags.owndata and copied.tolist() == [0.0, 1.0, 2.0, 3.0]
