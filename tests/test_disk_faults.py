"""A full, read-only or vanished disk: the write fails whole (the last good file stays, no temporary is
left), and the error reads as one line naming the file and what to do."""

import errno
import logging
import os
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from tx_keras.run_folder.background_checkpoint import BackgroundCheckpoint
from tx_keras.run_folder.checkpoint import load_checkpoint, save_checkpoint
from tx_keras.run_folder.disk_fault import disk_fault
from tx_keras.run_folder.log_file import LogFile
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


@pytest.fixture
def full_disk_after_a_checkpoint(tmp_path, monkeypatch):
    """A run folder with a good checkpoint after epoch 1 (its path, model and bytes), then a disk that
    fills up in the middle of the next archive."""
    path = tmp_path / "run" / "checkpoints" / "last.npz"
    path.parent.parent.mkdir()
    model = _model()
    save_checkpoint(path, model, 1, {"loss": 1.0})

    def full_disk(stream, **arrays):
        stream.write(b"PK\x03\x04 half an archive")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(np, "savez", full_disk)
    return path, model, path.read_bytes()


def _kept_the_last_good_one(path, good, error):
    assert path.read_bytes() == good and load_checkpoint(path).epoch == 1
    assert [p.name for p in path.parent.iterdir()] == ["last.npz"]  # the temporary file is gone
    assert disk_fault(error) == (f"no space left on device while writing {path}", "free space")


def test_a_checkpoint_write_that_meets_a_full_disk_keeps_the_last_good_one(full_disk_after_a_checkpoint):
    path, model, good = full_disk_after_a_checkpoint
    with pytest.raises(OSError) as failed:
        save_checkpoint(path, model, 2, {"loss": 0.5})
    _kept_the_last_good_one(path, good, failed.value)


def test_a_full_disk_in_a_background_write_is_raised_by_the_next_flush(full_disk_after_a_checkpoint):
    path, model, good = full_disk_after_a_checkpoint
    writer = BackgroundCheckpoint(path)
    writer.save(model, 2, {"loss": 0.5})  # returns; the write fails on its own thread
    with pytest.raises(OSError) as failed:
        writer.flush()
    _kept_the_last_good_one(path, good, failed.value)
    writer.flush()  # the error is raised once


def test_a_failed_background_write_ends_training_at_the_next_step(full_disk_after_a_checkpoint):
    path, model, good = full_disk_after_a_checkpoint
    callback = EpochCheckpoint(path, every=1, epochs=3)
    callback.set_model(model)
    callback.on_epoch_end(1, {"loss": 0.5})  # epoch 2's checkpoint fails on its own thread
    deadline = time.monotonic() + 30
    with pytest.raises(OSError) as failed:
        while time.monotonic() < deadline:  # the steps of epoch 3
            callback.on_train_batch_end(0)
            time.sleep(0.01)
    _kept_the_last_good_one(path, good, failed.value)


def test_tensorflow_writers_faults_name_the_file():
    full = tf.errors.ResourceExhaustedError(
        None,
        None,
        "{{function_node __wrapped__FlushSummaryWriter_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
        "/runs/my run/train/events.out.tfevents.1.v2; No space left on device\n\tFailed to flush 3 events",
    )
    assert disk_fault(full) == (
        "no space left on device while writing /runs/my run/train/events.out.tfevents.1.v2",
        "free space",
    )
    read_only = tf.errors.PermissionDeniedError(
        None, None, "/runs/r/events.out.tfevents.2; Read-only file system"
    )
    assert disk_fault(read_only)[0] == "read-only file system while writing /runs/r/events.out.tfevents.2"
    assert disk_fault(tf.errors.InvalidArgumentError(None, None, "shapes do not match")) is None


def test_the_first_fault_of_a_chain_is_the_one_reported():
    try:
        try:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), "/runs/r/summary.json")
        except OSError:
            raise RuntimeError("while recording the failure") from None
    except RuntimeError as error:
        assert disk_fault(error) is None  # `from None`: not a consequence of the fault
    try:
        try:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), "/runs/r/checkpoints/last.npz")
        except OSError:
            raise tf.errors.ResourceExhaustedError(None, None, "/r/x.v2; No space left on device")  # noqa: B904
    except tf.errors.ResourceExhaustedError as error:
        assert disk_fault(error) == (
            "disk quota exceeded while writing /runs/r/checkpoints/last.npz",
            "free space or raise the quota",
        )


def test_a_vanished_run_folder_is_a_fault_but_a_missing_input_file_is_not(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints").rmdir()
    run_dir.rmdir()  # deleted under the run: its checkpoint is not written into a folder made anew
    with pytest.raises(FileNotFoundError) as failed:
        save_checkpoint(run_dir / "checkpoints" / "last.npz", _model(), 1, {})
    assert not run_dir.exists()
    what, fix = disk_fault(failed.value, run_dir)
    assert what == f"the run folder vanished while writing {run_dir}/checkpoints/last.npz"
    assert fix.startswith("put the run folder back")
    with pytest.raises(FileNotFoundError) as missing:
        open(tmp_path / "no such corpus.tsv")
    assert disk_fault(missing.value, run_dir) is None and disk_fault(failed.value) is None


class _FullStream:
    """A log file's stream on a disk that fails every write with `number`."""

    def __init__(self, number: int):
        self.number = number

    def write(self, text: str) -> None:
        raise OSError(self.number, os.strerror(self.number))

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EDQUOT])
def test_train_log_on_a_full_disk_prints_no_logging_error(tmp_path, capsys, number):
    handler = LogFile(tmp_path / "train.log")
    handler.stream = _FullStream(number)
    logger = logging.getLogger("tx_keras.test_log_file")
    logger.addHandler(handler)
    try:
        logger.error("the run failed")  # the traceback a failing run logs on its way out
    finally:
        logger.removeHandler(handler)
    assert capsys.readouterr().err == ""  # the run's one-line error stays the only line


def test_train_log_still_reports_other_logging_errors(tmp_path, capsys):
    handler = LogFile(tmp_path / "train.log")
    logger = logging.getLogger("tx_keras.test_log_file_alone")
    logger.propagate = False  # pytest's own capture handler raises on the same bad call
    logger.addHandler(handler)
    try:
        logger.error("%d apples", "not a number")  # a bug in a log call, not the disk
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert "--- Logging error ---" in capsys.readouterr().err
