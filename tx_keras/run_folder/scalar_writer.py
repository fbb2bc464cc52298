"""Where a run's scalar curves go: TensorBoard event files through `tf.summary` when TensorFlow is
installed; the same event files through TensorBoard's own pure-Python writer when it is not (a JAX run on
a machine without TensorFlow); a CSV file when neither package can be imported.

All three write the curve the same way: `<log_dir>/<split>` (train, validation), a tag, a step, a value.
The first two give TensorBoard identical records (a float32 scalar tensor tagged for the Scalars plugin,
as `tf.summary.scalar` writes it), so the dashboard, tx-compare and resumed runs read them alike.
"""

from __future__ import annotations

import csv
import importlib.util
import struct
import time
from pathlib import Path
from typing import Protocol

CSV_NAME = "scalars.csv"  # <log_dir>/<split>/scalars.csv: step,tag,value rows when TensorBoard is missing


class ScalarWriter(Protocol):
    def scalar(self, tag: str, value: float, step: int) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def scalar_writer_kind() -> str:
    """`tf.summary`, `tensorboard` (its pure-Python event writer) or `csv`: what this machine can write."""
    if importlib.util.find_spec("tensorflow") is not None:
        return "tf.summary"
    try:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: F401
    except ImportError:
        return "csv"
    return "tensorboard"


def scalar_writer(log_dir: Path) -> ScalarWriter:
    """A writer of scalar curves into `log_dir`, of the best kind this machine has."""
    kind = scalar_writer_kind()
    if kind == "tf.summary":
        return _SummaryWriter(log_dir)
    if kind == "tensorboard":
        return _EventFileWriter(log_dir)
    return _CsvWriter(log_dir)


class _SummaryWriter:
    """tf.summary's writer, as the runs always wrote."""

    def __init__(self, log_dir: Path):
        import tensorflow as tf

        self._tf = tf
        self._writer = tf.summary.create_file_writer(str(log_dir))

    def scalar(self, tag: str, value: float, step: int) -> None:
        with self._writer.as_default():
            self._tf.summary.scalar(tag, value, step=step)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class _EventFileWriter:
    """TensorBoard's event-file writer (no TensorFlow), writing what `tf.summary.scalar` writes."""

    def __init__(self, log_dir: Path):
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._event, self._summary = event_pb2.Event, summary_pb2
        self._tensor, self._shape, self._float = (
            tensor_pb2.TensorProto,
            tensor_shape_pb2.TensorShapeProto,
            types_pb2.DT_FLOAT,
        )
        self._writer = EventFileWriter(str(log_dir))
        self._metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
        )

    def scalar(self, tag: str, value: float, step: int) -> None:
        # tf.summary's encoding: a float32 scalar's 4 little-endian bytes as the tensor's content
        content = struct.pack("<f", float(value))
        tensor = self._tensor(dtype=self._float, tensor_shape=self._shape(), tensor_content=content)
        summary = self._summary.Summary(
            value=[self._summary.Summary.Value(tag=tag, tensor=tensor, metadata=self._metadata)]
        )
        self._writer.add_event(self._event(wall_time=time.time(), step=int(step), summary=summary))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class _CsvWriter:
    """step,tag,value rows, appended and flushed: what a run can write without TensorBoard."""

    def __init__(self, log_dir: Path):
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        path = Path(log_dir) / CSV_NAME
        fresh = not path.exists()
        self._file = path.open("a", newline="")
        self._csv = csv.writer(self._file)
        if fresh:
            self._csv.writerow(["step", "tag", "value"])

    def scalar(self, tag: str, value: float, step: int) -> None:
        self._csv.writerow([int(step), tag, float(value)])

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()
