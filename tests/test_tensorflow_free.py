"""The pieces a JAX run without TensorFlow uses in place of TensorFlow's: numpy batches through
`keras.utils.PyDataset` (the same batches as the tf.data pipeline where numpy draws the order) and scalar
curves through TensorBoard's own event writer (the same records as tf.summary's) or a CSV file."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import TENSORS, EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

from tests.conftest import TINY
from tx_keras.data import make_dataset
from tx_keras.data.batching.numpy_batches import NumpyBatches
from tx_keras.run_folder import scalar_writer

# On PYTHONPATH: a Python where `import tensorflow` fails as where it is not installed.
NO_TENSORFLOW = str(Path(__file__).parent / "fixtures" / "no_tensorflow")


def _pairs(rows: int = 50, width: int = 12, seed: int = 3):
    """Right-padded id rows of random lengths; targets start with SOS (1)."""
    rng = np.random.default_rng(seed)
    source = np.zeros((rows, width), np.int32)
    target = np.zeros((rows, width), np.int32)
    for row in range(rows):
        length = rng.integers(2, width)
        source[row, :length] = rng.integers(4, 20, length)
        target[row, 0] = 1
        target[row, 1:length] = rng.integers(4, 20, length - 1)
    return source, target


def _flat(batches) -> list[tuple[np.ndarray, ...]]:
    return [tuple(np.asarray(part) for part in (*inputs, labels)) for inputs, labels in batches]


def _tf_batches(source, target, **kwargs):
    return _flat(make_dataset(source, target, **kwargs).as_numpy_iterator())


def _numpy_batches(source, target, **kwargs):
    batches = NumpyBatches(source, target, **kwargs)
    batches.on_epoch_begin()
    return _flat(batches[index] for index in range(len(batches.plan)))


@pytest.mark.parametrize(
    "settings",
    [
        {"batching": "bucket", "batch_tokens": 60, "shuffle": True, "seed": 4, "epoch": 2},
        {"batching": "bucket", "batch_tokens": 60, "shuffle": True, "seed": 4, "shape_classes": 3},
        {"batching": "bucket", "shuffle": False},
        {"batching": "fixed", "shuffle": False},
    ],
    ids=["bucket-shuffled", "bucket-shape-classes", "bucket-in-order", "fixed-in-order"],
)
def test_numpy_batches_are_the_tf_data_batches(settings):
    source, target = _pairs()
    expected = _tf_batches(source, target, batch_size=8, **settings)
    got = _numpy_batches(source, target, batch_size=8, **settings)
    assert len(got) == len(expected) > 3
    for mine, theirs in zip(got, expected, strict=True):
        for part, other in zip(mine, theirs, strict=True):
            np.testing.assert_array_equal(part, other)
            assert part.dtype == np.int32


def test_shuffled_fixed_batches_are_a_seeded_permutation_per_epoch_and_skip_keeps_the_length():
    source, target = _pairs()
    epoch_0 = _numpy_batches(source, target, batch_size=8, shuffle=True, seed=1, epoch=0)
    again = _numpy_batches(source, target, batch_size=8, shuffle=True, seed=1, epoch=0)
    epoch_1 = _numpy_batches(source, target, batch_size=8, shuffle=True, seed=1, epoch=1)
    rows = np.concatenate([batch[0] for batch in epoch_0])
    assert sorted(map(tuple, rows)) == sorted(map(tuple, source))  # every row once
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(epoch_0, again, strict=True))
    assert not all(np.array_equal(a[0], b[0]) for a, b in zip(epoch_0, epoch_1, strict=True))
    skipped = NumpyBatches(source, target, batch_size=8, shuffle=True, seed=1, epoch=0, skip=2)
    skipped.on_epoch_begin()
    assert len(skipped) == 7  # the epoch's length as declared; the trainer ends the shortened epoch
    np.testing.assert_array_equal(skipped[0][0][0], epoch_0[2][0])


def _tensors(folder):
    events = EventAccumulator(str(folder), size_guidance={TENSORS: 0})
    events.Reload()
    return {
        tag: [(event.step, event.tensor_proto.SerializeToString()) for event in events.Tensors(tag)]
        for tag in events.Tags()["tensors"]
    }, {tag: events.SummaryMetadata(tag).plugin_data.plugin_name for tag in events.Tags()["tensors"]}


def test_tensorboards_own_writer_writes_what_tf_summary_writes(tmp_path):
    points = [("epoch_loss", 0.75, 0), ("epoch_loss", 0.5, 1), ("optimizer/learning_rate", 1e-3, 1)]
    for writer in (
        scalar_writer._SummaryWriter(tmp_path / "tf"),
        scalar_writer._EventFileWriter(tmp_path / "tb"),
    ):
        for tag, value, step in points:
            writer.scalar(tag, value, step)
        writer.close()
    assert _tensors(tmp_path / "tb") == _tensors(tmp_path / "tf")
    values, plugins = _tensors(tmp_path / "tb")  # the same bytes: check they hold what was written
    events = EventAccumulator(str(tmp_path / "tb"), size_guidance={TENSORS: 0})
    events.Reload()
    read = [(event.step, float(make_ndarray(event.tensor_proto))) for event in events.Tensors("epoch_loss")]
    assert read == [(0, 0.75), (1, 0.5)] and set(plugins.values()) == {"scalars"}


def test_csv_scalars_without_tensorboard(tmp_path):
    writer = scalar_writer._CsvWriter(tmp_path / "train")
    writer.scalar("epoch_loss", 0.5, 1)
    writer.close()
    writer = scalar_writer._CsvWriter(tmp_path / "train")  # a resumed run appends
    writer.scalar("epoch_loss", 0.25, 2)
    writer.close()
    with (tmp_path / "train" / scalar_writer.CSV_NAME).open() as file:
        assert list(csv.reader(file)) == [
            ["step", "tag", "value"],
            ["1", "epoch_loss", "0.5"],
            ["2", "epoch_loss", "0.25"],
        ]


@pytest.mark.slow
def test_a_jax_run_of_an_embedded_task_without_tensorflow(tmp_path):
    """tx-train on a Python whose `import tensorflow` fails: trains, evaluates, writes summary.json with
    its metrics and what it left out, its scalar curves as TensorBoard event files (TensorBoard's own
    writer), model.keras for a later `tx-export`, and no SavedModel."""
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tx_keras.cli.train",
            "data=reverse",
            *(override for override in TINY if not override.startswith("trainer.epochs=")),
            "trainer.epochs=1",
            "trainer.backend=jax",
            f"hydra.run.dir={run_dir}",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": NO_TENSORFLOW},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["config"]["trainer"]["backend"] == "jax"
    for name in ("train_loss", "validation_loss", "test_loss", "test_exact_match"):
        assert np.isfinite(summary["metrics"][name])
    without = summary["without_tensorflow"]
    assert without["scalars"] == "tensorboard" and "the SavedModel export" in without["skipped"]
    assert without["export_later"] == f"tx-export {run_dir}" and "export" not in summary
    assert (run_dir / "model.keras").is_file() and not (run_dir / "export").exists()
    train = EventAccumulator(str(run_dir / "train"), size_guidance={TENSORS: 0})
    train.Reload()
    (loss,) = train.Tensors("epoch_loss")
    assert loss.step == 0 and float(make_ndarray(loss.tensor_proto)) == pytest.approx(
        summary["metrics"]["train_loss"], rel=1e-5
    )
    final = EventAccumulator(str(run_dir), size_guidance={TENSORS: 0})
    final.Reload()
    assert "final/test_exact_match" in final.Tags()["tensors"]
    assert "export later, where TensorFlow is installed: tx-export" in done.stderr + done.stdout


@pytest.mark.parametrize("join", ["words", "wordpiece", "characters"])
def test_plain_detokenizer_writes_the_graphs_texts(join):
    from tx_keras.data.detokenizer import Detokenizer
    from tx_keras.data.plain_detokenizer import PlainDetokenizer

    tokens = ["", "<s>", "</s>", "<unk>", "l'", "homme", "##s", "▁", "a", "b", "est", "-", "##ce"]
    rows = np.random.default_rng(1).integers(0, len(tokens), (40, 9))
    rows[::3, 0] = 1  # some rows start with SOS
    assert PlainDetokenizer(tokens, join).texts(rows) == Detokenizer(tokens, join).texts(rows)
