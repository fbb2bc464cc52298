"""Every point of a run folder's event files, for the tests that compare a resumed run with an
uninterrupted one point by point."""

import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event


def event_points(folder, tags=None) -> list[tuple[str, int, bytes]]:
    """Every (tag, step, value) in the folder's event files, in file order (a restart adds a file)."""
    points = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = Event.FromString(record)
            points += [
                (value.tag, event.step, value.tensor.SerializeToString())
                for value in event.summary.value
                if tags is None or value.tag in tags
            ]
    return points
