"""Rolling event files back to a checkpoint: later steps go, earlier ones and other folders stay."""

import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event

from tx_keras.run_folder.event_rollback import rollback_events


def _write(folder, steps, tag="epoch_loss"):
    writer = tf.summary.create_file_writer(str(folder))
    with writer.as_default():
        for step in steps:
            tf.summary.scalar(tag, float(step), step=step)
    writer.close()


def _steps(folder):
    steps = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = Event.FromString(record)
            steps += [event.step for _ in event.summary.value]
    return steps


def test_rollback_drops_later_steps_in_named_folders_only(tmp_path):
    _write(tmp_path / "train", range(5))
    _write(tmp_path / "attention", range(1, 6))
    _write(tmp_path / "final", [5])
    _write(tmp_path / "other", range(5))
    rollback_events(tmp_path, {"train": 2, "attention": 3, "final": 0})
    assert _steps(tmp_path / "train") == [0, 1]
    assert _steps(tmp_path / "attention") == [1, 2]
    assert not list((tmp_path / "final").glob("events.out.tfevents.*"))  # nothing left: file removed
    assert _steps(tmp_path / "other") == [0, 1, 2, 3, 4]


def test_rollback_survives_a_record_torn_by_a_kill(tmp_path):
    _write(tmp_path / "train", range(3))
    (path,) = (tmp_path / "train").glob("events.out.tfevents.*")
    path.write_bytes(path.read_bytes()[:-7])  # the last record cut short, as SIGKILL leaves it
    rollback_events(tmp_path, {"train": 10})
    assert _steps(tmp_path / "train") == [0, 1]
    _write(tmp_path / "train", [2])  # what the resumed run writes next, in a new file
    assert _steps(tmp_path / "train") == [0, 1, 2]


def test_a_tag_counted_in_optimizer_steps_is_cut_at_its_own_step(tmp_path):
    """`batch_loss` runs on the optimizer's step, epoch curves on the epoch: one folder, two cut-offs."""
    _write(tmp_path / "train", range(3))  # epochs 0, 1, 2
    _write(tmp_path / "train", [10, 20, 30, 40], tag="batch_loss")
    rollback_events(tmp_path, {"train": 2}, tag_steps={"batch_loss": 21})
    assert _steps(tmp_path / "train") == [0, 1, 10, 20]
