"""trainer.distribution=data_parallel: the same config and global batch give the one-device loss curve on two
devices (TensorFlow logical devices, JAX forced host devices) and on two processes over loopback; only
process 0 writes the run folder; a killed process ends the others in one line and the same commands
resume the run; bad combinations are refused in one line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf
from hydra import compose, initialize_config_module
from tensorboard.compat.proto.tensor_pb2 import TensorProto

from tests.event_points import event_points
from tx_keras.data.batching.replica_batches import padded_rows, process_share
from tx_keras.run_folder.resume import STEP_LOSS_TAG
from tx_keras.training.processes.process_group import ProcessGroup
from tx_keras.training.processes.stop_signals import INTERRUPTED_EXIT_CODE
from tx_keras.training.run.config_check import check_config
from tx_keras.user_error import ConfigError, UserError

# 20 optimizer steps of 8 pairs, one per-step loss point each; float32 so that the summation order of a
# split batch moves the loss by float32 rounding only (bf16 would round it far more coarsely).
STEPS_RUN = [
    "model=tiny",
    "model.dropout=0.0",  # each device would draw its own dropout masks
    "trainer.epochs=1",
    "trainer.batch_size=8",
    "trainer.precision=float32",
    "trainer.early_stopping.patience=null",
    "data.num_train=160",
    "data.num_validation=8",
    "data.num_test=8",
    "logging.verbose=0",
    "logging.loss_every_steps=1",
    "logging.probes=0",
    "logging.diagnostics_every=0",
    "logging.attention_maps=off",
    "export.enabled=false",
]
CURVE = {"rtol": 1e-4}  # the bound; measured ~1.5e-6 (TF, JAX) on the AVX-512 EPYC


def _free_port() -> int:
    """A port free now, with the next one free too (the peer watch listens on the coordinator's port + 1)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        try:
            with socket.socket() as next_one:
                next_one.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


def _start(args, cwd) -> subprocess.Popen:
    """`tx-train` in a process of its own, as a user (or a cluster's launcher) starts it."""
    return subprocess.Popen(
        [sys.executable, "-m", "tx_keras.cli.train", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    """Exit code and stderr; stdout is kept as `process.output`."""
    process.output, stderr = process.communicate(timeout=timeout)
    return process.returncode, stderr


def _curve(run_dir) -> list[tuple[int, float]]:
    """The per-step training loss (logging.loss_every_steps=1) as (optimizer step, loss)."""
    return [
        (step, float(tf.make_ndarray(TensorProto.FromString(value))))
        for _, step, value in event_points(run_dir / "train", [STEP_LOSS_TAG])
    ]


def _same_curve(run_dir, reference_dir) -> None:
    got, want = _curve(run_dir), _curve(reference_dir)
    assert [step for step, _ in got] == [step for step, _ in want] == list(range(1, 21))
    np.testing.assert_allclose([v for _, v in got], [v for _, v in want], **CURVE)


def _processes(run_dir, backend_args, port, cwd) -> list[subprocess.Popen]:
    """Process 1 first, then process 0: the order a cluster gives is any."""
    group = [
        "trainer.distribution=data_parallel",
        "trainer.num_processes=2",
        f"trainer.coordinator=127.0.0.1:{port}",
    ]
    return [
        _start(
            [
                *STEPS_RUN,
                *backend_args,
                *group,
                f"trainer.process_id={index}",
                f"hydra.run.dir={run_dir}",
            ],
            cwd,
        )
        for index in (1, 0)
    ]


def _summary_losses(run_dir) -> dict[str, float]:
    """The loss metrics of summary.json (train, validation, test)."""
    metrics = json.loads((run_dir / "summary.json").read_text())["metrics"]
    return {name: value for name, value in metrics.items() if name.endswith("loss")}


def _files(run_dir) -> list[str]:
    return sorted(str(path.relative_to(run_dir)) for path in run_dir.rglob("*") if path.is_file())


@pytest.mark.slow  # two JAX processes: ~90 s loaded (two-device TensorFlow stays in the default run)
def test_two_jax_processes_on_loopback_train_the_one_device_curve_and_only_process_0_writes(tmp_path):
    """The multi-process check: a 1-device run and a 2-process run side by side."""
    jax = ["trainer.backend=jax"]
    single = _start([*STEPS_RUN, *jax, f"hydra.run.dir={tmp_path / 'one'}"], tmp_path)
    worker, writer = _processes(tmp_path / "two", jax, _free_port(), tmp_path)
    results = [_finish(process) for process in (single, worker, writer)]
    _same_curve(tmp_path / "two", tmp_path / "one")
    # Process 0 wrote the same kinds of files as a one-process run, each once, with its own process id in
    # every event file's name; the worker's output went to a private folder that is gone.
    files = _files(tmp_path / "two")
    assert [name.split(".")[0] for name in files] == [name.split(".")[0] for name in _files(tmp_path / "one")]
    events = [name for name in files if "tfevents" in name]
    assert events and {name.split(".")[-3] for name in events} == {str(writer.pid)}
    assert "trainer.process_id=0" in (tmp_path / "two" / ".hydra" / "overrides.yaml").read_text()
    assert f"tx-train-process-1-pid{worker.pid}-" not in " ".join(os.listdir(tempfile.gettempdir()))
    for code, stderr in results:  # trained, evaluated and saved, each
        assert code == 0, stderr[-2000:]
    losses, reference = _summary_losses(tmp_path / "two"), _summary_losses(tmp_path / "one")
    assert reference and losses.keys() == reference.keys()
    np.testing.assert_allclose([losses[k] for k in reference], list(reference.values()), **CURVE)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_two_local_devices_train_the_one_device_curve(tmp_path, backend):
    """TensorFlow: MirroredStrategy over 2 logical CPU devices; JAX: DataParallel over 2 host devices."""
    args = [*STEPS_RUN, f"trainer.backend={backend}"]
    one = _start([*args, f"hydra.run.dir={tmp_path / 'one'}"], tmp_path)
    two = _start(
        [
            *args,
            "trainer.distribution=data_parallel",
            "trainer.devices=2",
            f"hydra.run.dir={tmp_path / 'two'}",
        ],
        tmp_path,
    )
    for code, stderr in (_finish(one), _finish(two)):
        assert code == 0, stderr[-2000:]
    _same_curve(tmp_path / "two", tmp_path / "one")
    log = (tmp_path / "two" / "train.log").read_text()
    assert "data_parallel:" in log and "over 2 devices" in log


def test_two_tensorflow_devices_with_the_default_logging_diagnose_and_print_only_our_lines(data_parallel_run):
    """The documented command with every default diagnostic on (STEPS_RUN turns them off): the per-layer
    gradient norms are taken in a replica's context (mirrored weights cannot be differentiated outside
    one), and tf.distribute's INFO lines ("Reduce to ...", "Collective all_reduce ...") go to train.log,
    not the terminal. The run (tests/conftest.py) is bucketed real text, which test_parallel_text.py reads
    too."""
    result, run_dir = data_parallel_run
    assert result.returncode == 0, result.stderr[-2000:]
    norms = {}
    for path in run_dir.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag.startswith("layers/gradient_norm/"):
                    norms[value.tag] = float(tf.make_ndarray(value.tensor))
    assert len(norms) >= 4 and all(np.isfinite(v) and v > 0 for v in norms.values()), norms
    log = (run_dir / "train.log").read_text()
    assert "Collective all_reduce" in log
    terminal = result.stdout.splitlines()
    assert "data_parallel: tf.distribute.MirroredStrategy over 2 devices" in terminal
    assert not [line for line in terminal if line.startswith(("Reduce to", "Collective", "Using Mirrored"))]


@pytest.mark.slow
def test_a_killed_process_ends_the_other_in_one_line_and_the_same_commands_resume(tmp_path):
    """Kill process 1 after the first epoch's checkpoint: process 0 ends at once with the line and exit 75;
    the same two commands resume and end with the curve of an uninterrupted one-device run."""
    jax = ["trainer.backend=jax", "trainer.epochs=3", "data.num_train=48"]  # 6 steps an epoch
    single = _start([*STEPS_RUN, *jax, f"hydra.run.dir={tmp_path / 'one'}"], tmp_path)
    port = _free_port()
    worker, writer = _processes(tmp_path / "two", jax, port, tmp_path)
    checkpoint = tmp_path / "two" / "checkpoints" / "last.npz"
    deadline = time.monotonic() + 600
    while not checkpoint.exists() and time.monotonic() < deadline and writer.poll() is None:
        time.sleep(0.5)
    assert checkpoint.exists()
    worker.send_signal(signal.SIGKILL)
    code, stderr = _finish(writer, timeout=60)
    assert code == INTERRUPTED_EXIT_CODE, stderr[-2000:]
    assert stderr.strip().splitlines()[-1] == (
        "tx-train: process 1 of the 2 processes of this run stopped (killed or crashed); process 0 ends "
        "too. Start the same command on every process to resume from the last checkpoint"
    )
    worker.wait()
    again = _processes(tmp_path / "two", jax, port, tmp_path)
    results = [_finish(process) for process in (*again, single)]
    assert [code for code, _ in results] == [0, 0, 0], [stderr[-1500:] for _, stderr in results]
    assert "tx-train: resuming" in again[1].output  # process 0, from the checkpoint of epoch 1 or later
    got = _curve(tmp_path / "two")
    want = _curve(tmp_path / "one")
    assert [step for step, _ in got] == [step for step, _ in want] == list(range(1, 19))
    np.testing.assert_allclose([v for _, v in got], [v for _, v in want], **CURVE)
    losses, reference = _summary_losses(tmp_path / "two"), _summary_losses(tmp_path / "one")
    assert reference and losses.keys() == reference.keys()
    np.testing.assert_allclose([losses[k] for k in reference], list(reference.values()), **CURVE)


JAX_PAIR = [
    "trainer.distribution=data_parallel",
    "trainer.backend=jax",
    "trainer.num_processes=2",
    "trainer.coordinator=h:1",
]


def _config(*overrides: str):
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (
            ["trainer.devices=2"],
            "trainer.devices=2 needs trainer.distribution=data_parallel",
        ),
        (
            ["trainer.distribution=data_parallel", "trainer.num_processes=2", "trainer.coordinator=h:1"],
            "2 processes with trainer.distribution=data_parallel need trainer.backend=jax: Keras 3's fit "
            "fails under TensorFlow's MultiWorkerMirroredStrategy (keras-team/keras#20585)",
        ),
        (
            ["trainer.distribution=data_parallel", "trainer.backend=jax", "trainer.num_processes=2"],
            "trainer.num_processes=2 needs trainer.coordinator=HOST:PORT (process 0's address, the same for "
            "every process) or $KERAS_DISTRIBUTION_JOB_ADDRESSES",
        ),
        (
            ["trainer.distribution=data_parallel", "trainer.num_processes=2", "trainer.process_id=2"],
            "trainer.process_id=2 must be in 0..1 (trainer.num_processes=2)",
        ),
        (
            [
                "trainer.distribution=data_parallel",
                "trainer.backend=jax",
                "trainer.num_processes=2",
                "trainer.coordinator=h:1",
                "trainer.batching=bucket",
            ],
            "trainer.batching=bucket varies the rows of a batch, which several processes cannot split "
            "evenly; use trainer.batching=fixed with several processes",
        ),
        (
            ["trainer.distribution=ring"],
            "trainer.distribution='ring' is not allowed; choose one of: none, data_parallel",
        ),
        (
            [*JAX_PAIR, "trainer.checkpoint_every_minutes=5"],
            "trainer.checkpoint_every_minutes=5.0 is decided by each process's own clock, and several "
            "processes must stop and checkpoint at the same step; use epochs or max_steps, and "
            "checkpoint_every",
        ),
        (
            ["trainer.distribution=data_parallel", "trainer.coordinator=nohost"],
            "trainer.coordinator='nohost' must be HOST:PORT, e.g. 10.0.0.1:9876",
        ),
    ],
)
def test_bad_combinations_are_refused_in_one_line(overrides, line, monkeypatch):
    for name in (
        "SLURM_NTASKS",
        "SLURM_PROCID",
        "KERAS_DISTRIBUTION_NUM_PROCESSES",
        "KERAS_DISTRIBUTION_PROCESS_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError) as error:
        check_config(_config(*overrides))
    assert str(error.value) == line


def test_the_process_group_comes_from_the_keys_then_keras_then_slurm_variables():
    trainer = SimpleNamespace(
        distribution="data_parallel", num_processes=None, process_id=None, coordinator=None
    )
    slurm = {"SLURM_NTASKS": "4", "SLURM_PROCID": "3", "KERAS_DISTRIBUTION_JOB_ADDRESSES": "n1:7000,n2:7000"}
    assert ProcessGroup.of(trainer, slurm) == ProcessGroup(4, 3, "n1:7000")
    keras_vars = {**slurm, "KERAS_DISTRIBUTION_NUM_PROCESSES": "2", "KERAS_DISTRIBUTION_PROCESS_ID": "1"}
    assert ProcessGroup.of(trainer, keras_vars) == ProcessGroup(2, 1, "n1:7000")
    keys = SimpleNamespace(
        **{**vars(trainer), "num_processes": 3, "process_id": 0, "coordinator": "10.0.0.1:9876"}
    )
    assert ProcessGroup.of(keys, keras_vars) == ProcessGroup(3, 0, "10.0.0.1:9876")
    assert (
        ProcessGroup.of(SimpleNamespace(distribution="none"), slurm) == ProcessGroup()
    )  # not distributed: one process
    assert ProcessGroup.of(trainer, {}) == ProcessGroup()
    with pytest.raises(UserError, match=r"^\$SLURM_PROCID='x' must be a whole number$"):
        ProcessGroup.of(trainer, {**slurm, "SLURM_PROCID": "x"})


def test_short_batches_are_padded_with_rows_that_count_no_token_and_shared_in_process_order():
    source = np.arange(1, 11 * 3 + 1, dtype=np.int32).reshape(11, 3)
    labels = np.arange(1, 11 * 2 + 1, dtype=np.int32).reshape(11, 2)
    batches = tf.data.Dataset.from_tensor_slices(((source, source), labels)).batch(4)  # 4, 4, 3 rows
    padded = list(padded_rows(batches, 4).as_numpy_iterator())
    assert [len(batch[1]) for batch in padded] == [4, 4, 4]
    (last_source, _), last_labels = padded[-1]
    np.testing.assert_array_equal(last_labels, [*labels[8:], [0, 0]])  # the added row: padding labels only
    np.testing.assert_array_equal(last_source, [*source[8:], source[8]])  # inputs: the batch's first row
    shares = [list(process_share(padded_rows(batches, 4), index, 2).as_numpy_iterator()) for index in (0, 1)]
    for step, batch in enumerate(padded):  # process 0's rows, then process 1's: the whole batch, in order
        np.testing.assert_array_equal(np.concatenate([shares[0][step][1], shares[1][step][1]]), batch[1])
