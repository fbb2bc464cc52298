"""A run's reliability end to end, as a user meets it: kill and resume, determinism, divergence."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.plugins.hparams import plugin_data_pb2

from tests.ahead import ahead_fixture
from tests.conftest import tx_train

# Tiny, deterministic, with dropout so the random-seed state has to survive a restart too.
RUN = [
    "model=tiny",
    "model.dropout=0.1",
    "trainer.epochs=3",
    "trainer.deterministic=true",
    "data.num_train=256",
    "data.num_validation=32",
    "data.num_test=32",
    "logging.verbose=0",
    "logging.probes=1",
    "logging.attention_maps=first_last",
    "export.enabled=false",  # what these tests compare is the checkpoint, the summary and the event files
]


def _arrays(run_dir):
    with np.load(run_dir / "checkpoints" / "last.npz", allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def _points(folder, tag):
    """Every (step, value) of `tag`, over all event files of the folder (a restart adds one)."""
    points = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = Event.FromString(record)
            points += [
                (event.step, value.tensor.SerializeToString())
                for value in event.summary.value
                if value.tag == tag
            ]
    return points


def _steps(folder, tag):
    """Every step at which `tag` was written, over all event files of the folder (a restart adds one)."""
    return [step for step, _ in _points(folder, tag)]


@ahead_fixture
def twins(root):
    """Two uninterrupted runs of the same config, side by side (they share nothing but the machine);
    started ahead (tests/ahead.py)."""
    runs = [root / "first", root / "second"]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tx_keras.cli.train", *RUN, f"hydra.run.dir={run}"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run in runs
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr[-2000:]
    return runs


@pytest.fixture(scope="module")
def straight(twins):
    """An uninterrupted run: the reference."""
    return twins[0]


def test_same_config_twice_gives_identical_metrics_and_weights(twins):
    first, second = (json.loads((run / "summary.json").read_text()) for run in twins)
    assert first["metrics"] == second["metrics"] and first["status"] == "completed"
    a, b = (_arrays(run) for run in twins)
    assert a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a)


@pytest.mark.slow  # killed and resumed beside a reference: ~40 s (test_preemption resumes exactly)
def test_killed_run_resumes_to_the_same_weights_with_each_epoch_logged_once(straight, tmp_path):
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "tx_keras.cli.train", *RUN, f"hydra.run.dir={run_dir}"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = run_dir / "checkpoints" / "last.npz"
    deadline = time.monotonic() + 300
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = json.loads(str(_arrays(run_dir)["meta"]))["epoch"]
    assert killed_at < 3 and not (run_dir / "summary.json").exists()  # really killed mid-training

    result = tx_train(*RUN, f"hydra.run.dir={run_dir}", cwd=tmp_path)  # the same command again
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"tx-train: resuming {run_dir} after epoch {killed_at} of 3" in result.stdout
    a, b = _arrays(straight), _arrays(run_dir)
    assert a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs"] == 3
    assert summary["metrics"] == json.loads((straight / "summary.json").read_text())["metrics"]

    for folder in ("train", "validation"):
        assert _steps(run_dir / folder, "epoch_loss") == [0, 1, 2], folder
    assert _steps(run_dir / "train", "optimizer/learning_rate") == [0, 1, 2]
    # The per-step loss: every point once, the same steps and values as the uninterrupted run's.
    step_loss = _points(run_dir / "train", "batch_loss")
    assert len(step_loss) >= 3 and step_loss == _points(straight / "train", "batch_loss")
    assert _steps(run_dir, "layers/gradient_norm/encoder/layer_1") == [0, 1, 2, 3]
    assert _steps(run_dir, "samples/translations") == [1, 3]
    assert _steps(run_dir, "attention/cross/layer_1") == [1, 3]
    assert _steps(run_dir, "final/test_exact_match") == [3]

    again = tx_train(f"resume={run_dir}", cwd=tmp_path)  # finished: nothing to redo, nothing lost
    assert again.returncode == 0 and "already completed" in again.stdout, again.stderr[-2000:]
    assert json.loads((run_dir / "summary.json").read_text()) == summary


@ahead_fixture
def diverging_run(root):
    """The run of the test below, started ahead (tests/ahead.py): (its result, its folder)."""
    run_dir = root / "run"
    result = tx_train(
        *[arg for arg in RUN if not arg.startswith("trainer.epochs=")],
        "trainer.epochs=1",
        "model.norm=none",
        "trainer.lr_scale=1e9",
        f"hydra.run.dir={run_dir}",
        cwd=root,
    )
    return result, run_dir


def test_divergence_stops_the_run_as_diverged_with_exit_code_0(diverging_run):
    result, run_dir = diverging_run
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "diverged" and summary["reason"] == "loss became nan in epoch 1"
    assert summary["epochs"] == 1 and not (run_dir / "checkpoints").exists()  # no NaN state to resume
    for path in run_dir.glob("events.out.tfevents.*"):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            for value in Event.FromString(record).summary.value:
                if value.tag == "_hparams_/session_start_info":
                    data = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
                    assert data.session_start_info.hparams["status"].string_value == "diverged"
                    return
    raise AssertionError("no HParams session in the run folder")
