"""Faults end to end, as a user meets them: SIGTERM in the middle of an epoch, a disk that fills up. In
each case the same command afterwards ends with exactly the uninterrupted run's weights, metrics and curves
(same machine, same computation: compared bit for bit). Both are slow; test_preemption.py and
test_disk_faults.py cover the same mechanisms in-process by default."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event

from tests.event_points import event_points
from tx_keras.run_folder.disk_fault import DISK_FAULT_EXIT_CODE
from tx_keras.run_folder.resume import STEP_LOSS_TAG
from tx_keras.training.processes.stop_signals import INTERRUPTED_EXIT_CODE

# End to end, as a user meets it: tiny, deterministic, with dropout; 64 steps an epoch, so that a SIGTERM
# sent once epoch 2 is under way lands inside it.
RUN = [
    "model=tiny",
    "model.dropout=0.1",
    "trainer.epochs=2",
    "trainer.batch_size=16",
    "trainer.deterministic=true",
    "data.num_train=1024",
    "data.num_validation=32",
    "data.num_test=32",
    "logging.verbose=0",
    "logging.loss_every_steps=1",
    "logging.probes=1",
    "logging.attention_maps=first_last",
    "export.enabled=false",
]
RUN_STEPS = 64


def _command(run_dir):
    return [sys.executable, "-m", "tx_keras.cli.train", *RUN, f"hydra.run.dir={run_dir}"]


def _arrays(run_dir):
    with np.load(run_dir / "checkpoints" / "last.npz", allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def _last_step_logged(run_dir):
    """The last optimizer step whose loss point is on disk (a record being written is skipped)."""
    steps = [-1]
    for path in (run_dir / "train").glob("events.out.tfevents.*"):
        try:
            for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
                event = Event.FromString(record)
                steps += [event.step for value in event.summary.value if value.tag == STEP_LOSS_TAG]
        except tf.errors.DataLossError:
            pass
    return max(steps)


def _other_lines(stderr):
    """stderr without TensorFlow's C++ log lines (`E0000 ...`: a oneDNN notice on some CPUs)."""
    return [line for line in stderr.splitlines() if not (line[:1] in "EWI" and line[1:5].isdigit())]


def _same_run(reference: Path, run_dir: Path) -> None:
    a, b = _arrays(reference), _arrays(run_dir)
    assert a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a)
    summaries = [json.loads((run / "summary.json").read_text()) for run in (reference, run_dir)]
    assert summaries[1]["status"] == "completed" and summaries[1]["epochs"] == 2
    assert summaries[0]["metrics"] == summaries[1]["metrics"]
    for folder in ("train", "validation"):  # every curve point once, the same values
        assert sorted(event_points(run_dir / folder)) == sorted(event_points(reference / folder)), folder
    # The dashboard's: each step once (diagnostics before training and after each epoch, the maps of the
    # first and last epochs, the final scores).
    tags = ("layers/gradient_norm/encoder/layer_1", "attention/cross/layer_1", "final/test_exact_match")
    steps = [(tag, step) for tag, step, _ in event_points(run_dir, tags)]
    assert sorted(steps) == sorted((tag, step) for tag, step, _ in event_points(reference, tags))
    assert len(steps) == 3 + 2 + 1


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run, trained while the test interrupts its twin (they share only the machine)."""
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    return run_dir, subprocess.Popen(_command(run_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.slow  # 5 min on 2 cores shared at load 8 (2026-12-02); test_preemption.py runs by default
def test_sigterm_then_the_same_command_equals_an_uninterrupted_run(reference, tmp_path):
    run_dir = tmp_path / "run"
    process = subprocess.Popen(_command(run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        sent_after = _last_step_logged(run_dir)
        if sent_after >= RUN_STEPS + 5:  # epoch 2 is under way
            process.send_signal(signal.SIGTERM)
            break
        time.sleep(0.05)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == INTERRUPTED_EXIT_CODE, stderr[-2000:]
    meta = json.loads(str(_arrays(run_dir)["meta"]))
    assert meta["epoch"] == 1 and 0 < meta["batch"] < RUN_STEPS  # inside epoch 2
    assert meta["step"] == RUN_STEPS + meta["batch"] > sent_after  # no completed step lost
    assert _other_lines(stderr) == [
        f"tx-train: interrupted by SIGTERM in epoch 2 after {meta['batch']} of its batches; "
        f"checkpoint saved; resume with: tx-train resume={run_dir}"
    ]
    assert not (run_dir / "summary.json").exists()

    again = subprocess.run(_command(run_dir), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"resuming {run_dir} after epoch 1 of 2 and {meta['batch']} batches of epoch 2" in again.stdout
    reference_dir, reference_process = reference
    assert reference_process.wait(timeout=600) == 0
    _same_run(reference_dir, run_dir)


@pytest.fixture
def small_disk(tmp_path):
    """A 16 MiB tmpfs (root can mount one; elsewhere the test is skipped), unmounted afterwards."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'mount failed'})")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=True)


def _fill(folder: Path) -> Path:
    """A file that takes every free byte of `folder`'s file system."""
    ballast = folder / "ballast"
    with open(ballast, "wb") as stream:
        try:
            while True:
                stream.write(b"\0" * (1 << 16))
                stream.flush()
        except OSError:
            pass
    return ballast


@pytest.mark.slow  # 5 min on 2 cores shared at load 8 (2026-12-02); test_disk_faults.py runs by default
def test_a_full_disk_ends_the_run_in_one_line_and_it_resumes_equal_once_space_is_back(reference, small_disk):
    run_dir = small_disk / "run"
    process = subprocess.Popen(_command(run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checkpoint = run_dir / "checkpoints" / "last.npz"
    deadline = time.monotonic() + 300
    while process.poll() is None and not checkpoint.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    ballast = _fill(small_disk)  # the disk fills up under the run, after its first checkpoint
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == DISK_FAULT_EXIT_CODE, stderr[-2000:]
    (line,) = _other_lines(stderr)
    assert line.startswith(f"tx-train: error: no space left on device while writing {run_dir}/")
    assert line.endswith(f"; free space, then resume with: tx-train resume={run_dir}")
    assert json.loads(str(_arrays(run_dir)["meta"]))["epoch"] == 1  # the last good checkpoint, whole
    assert [path.name for path in checkpoint.parent.iterdir()] == ["last.npz"]  # no temporary left

    ballast.unlink()  # space is back: the same command continues
    again = subprocess.run(_command(run_dir), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"tx-train: resuming {run_dir} after epoch 1 of 2" in again.stdout
    reference_dir, reference_process = reference
    assert reference_process.wait(timeout=600) == 0
    _same_run(reference_dir, run_dir)


def test_a_read_only_disk_is_one_line_before_anything_starts(small_disk, tmp_path):
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.train", "model=tiny", f"hydra.run.dir={small_disk}/run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == DISK_FAULT_EXIT_CODE
    assert _other_lines(result.stderr) == [
        f"tx-train: error: read-only file system while writing {small_disk}/run; make the file system "
        "writable, then run the same command again"
    ]
