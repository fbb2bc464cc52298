"""Shared test setup: quiet TensorFlow logs and seed every test."""

import functools
import gc
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from tx_keras.runtime.allocator import configure_allocator  # noqa: E402

# The tests train in this process as tx-train does in its own: the same allocator, set up before TensorFlow.
configure_allocator()

import keras  # noqa: E402
import pytest  # noqa: E402

from tests.ahead import JOBS, Ahead, ahead_fixture, job  # noqa: E402

ROOT = Path(__file__).parent.parent


def pytest_report_header(config: pytest.Config) -> str:
    """The machine the durations below belong to: CI machines differ in kind (AVX-512 with bf16 on one,
    AVX2 only on another), so a suite time means nothing without it."""
    from tx_keras.benchmark.machine import ONEDNN_STATES, machine

    info = machine()
    flags = " ".join(info["instructions"])
    return (
        f"machine: {info['cpu']}, {info['cores']} cores, {flags}, load {info['load_average']}, "
        f"oneDNN {ONEDNN_STATES[info['onednn']]}"
    )


@pytest.fixture(autouse=True)
def _seed():
    """Each test starts from the same Keras, NumPy and Python random state."""
    keras.utils.set_random_seed(0)


@pytest.fixture
def recorded_pools(monkeypatch) -> dict:
    """TensorFlow's pool setters recorded into the returned dict ({"intra": n, "inter": n}) instead of
    called (this process keeps its own pools), with no pool variable in the environment: what a command's
    plan (runtime/pool_plan.py) would set."""
    import tensorflow as tf

    pools: dict = {}
    for pool in ("intra", "inter"):
        setter = f"set_{pool}_op_parallelism_threads"
        monkeypatch.setattr(tf.config.threading, setter, lambda n, pool=pool: pools.__setitem__(pool, n))
    monkeypatch.delenv("TF_NUM_INTRAOP_THREADS", raising=False)
    monkeypatch.delenv("TF_NUM_INTEROP_THREADS", raising=False)
    return pools


TINY = [
    "model=tiny",
    "trainer.epochs=2",
    "data.num_train=256",
    "data.num_validation=32",
    "data.num_test=32",
    "logging.verbose=0",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules that read a setup started ahead run after those that read none, each group in its own
    order. Why: the jobs start with the first test, so by the time a test needs one it has mostly run
    beside the others instead of being waited for (the data-parallel run alone held the foreground 49 s
    when its module came fourth)."""
    waiting = {item.module for item in items if JOBS.keys() & set(getattr(item, "fixturenames", ()))}
    items.sort(key=lambda item: getattr(item, "module", None) in waiting)


@pytest.fixture(scope="module", autouse=True)
def _frozen_before_each_module():
    """At each module's first test, what the modules before it left alive (TensorFlow, Keras, session
    fixtures: ~1.3M objects) moves out of the cyclic collector's sight, after one collection of what they
    left dead (their module fixtures are torn down by then). Why: every full collection walks every
    tracked object, and statsmodels' Holm correction (tx-compare's groups) runs one per call, ~0.7 s each
    late in the suite (docs/decisions/test-suite-time.md)."""
    gc.collect()
    gc.freeze()


_QUEUES: list[Ahead] = []  # the session's queue, for the summary below


def pytest_terminal_summary(terminalreporter) -> None:
    """Which setups ran ahead and for how long: the other half of the suite's time, which --durations
    shows only as a fixture's wait."""
    own, started = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    terminalreporter.write_line(
        f"CPU seconds: {own.ru_utime + own.ru_stime:.0f} in pytest's own process, "
        f"{started.ru_utime + started.ru_stime:.0f} in the processes it started (ended ones)"
    )  # the suite is bound by CPU work on 2 cores: where the work is, not only where the waiting is
    for queue in _QUEUES:
        rows = sorted(queue.timings, key=lambda row: -row[2])
        if not rows:
            continue
        terminalreporter.write_sep("=", f"{len(rows)} setups started ahead (tests/ahead.py), wall seconds")
        for name, where, seconds in rows:
            terminalreporter.write_line(f"{seconds:7.1f}s  {name} ({where})")


@pytest.fixture(scope="session")
def ahead(request, tmp_path_factory):
    """The jobs (tests/ahead.py) of the fixtures this session's tests use, started in the order they are
    first needed; none in a child session that takes its parent's (PARENT_FIXTURES, below)."""
    needed: list[str] = []
    for item in [] if os.environ.get(PARENT_FIXTURES) else request.session.items:
        needed += [name for name in getattr(item, "fixturenames", ()) if name in JOBS and name not in needed]
    queue = Ahead(tmp_path_factory.mktemp, needed)
    _QUEUES.append(queue)
    yield queue
    queue.close()


@pytest.fixture(scope="session", autouse=True)
def _start_ahead(ahead):
    """Starts the background jobs with the session's first test."""


@ahead_fixture
def browser_sweep(folder: Path) -> Path:
    """The two real runs of tests/browser_harness.SWEEP, trained once for both browser modules."""
    from tests.browser_harness import train_sweep

    return train_sweep(folder)


@ahead_fixture
def reverse_run(folder: Path) -> Path:
    """tests/browser_harness.REVERSE as `folder/reverse`, trained once for the explorer's browser and
    explanation tests."""
    from tests.browser_harness import REVERSE, train_side_by_side

    train_side_by_side(folder, {"reverse": REVERSE}, timeout=600)
    return folder / "reverse"


def tx_train(*args, cwd):
    """Run `tx-train` as a user does, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def main_here(main: Callable[[list[str]], None], capsys, *args: str) -> subprocess.CompletedProcess:
    """A command's `main(argv)` in this process: its exit code and printed lines, as a fresh process would
    give them, without a fresh process's TensorFlow start-up (~10 s each on 2 shared cores)."""
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as stop:
        code = stop.code
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, printed.out, printed.err)


@pytest.fixture
def tx_train_here(monkeypatch, capsys):
    """`tx_train(*args, cwd=...)` through tx-train's `main` in this process, for commands it refuses
    before training: the same exit code and printed lines without a fresh process's start-up (~3 s each
    on 2 cores)."""
    return functools.partial(_tx_train_main, monkeypatch=monkeypatch, capsys=capsys)


def _tx_train_main(*args, cwd, monkeypatch, capsys) -> subprocess.CompletedProcess:
    from tx_keras.cli import train

    # Hydra must not point logging at pytest's captured streams (closed after the test); main sets these
    # variables for itself, and monkeypatch takes them back afterwards.
    quiet = ["hydra/job_logging=none", "hydra/hydra_logging=none"]
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setattr(sys, "argv", ["tx-train", *args, *quiet])
    capsys.readouterr()
    try:
        train.main()
        code = 0
    except SystemExit as exit_info:
        code = exit_info.code
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, printed.out, printed.err)


# What a child pytest started by a test (tests/test_kernel_libraries.py) takes from its parent session
# instead of training it again: a JSON file naming the tiny run (folder and tx-train result) and the copy
# model's .keras file. The child only reads them.
PARENT_FIXTURES = "TX_TESTS_PARENT_FIXTURES"


def _from_parent(name: str):
    path = os.environ.get(PARENT_FIXTURES)
    return json.loads(Path(path).read_text()).get(name) if path else None


def share_with_child(folder: Path, tiny_run, copy_model_file: str) -> dict[str, str]:
    """Write this session's `tiny_run` and the copy model's file under `folder`; returns the environment
    that makes a child pytest use them instead of training its own."""
    result, run_dir = tiny_run
    shared = {
        "tiny_run": {
            "args": result.args,
            "returncode": result.returncode,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "run_dir": str(run_dir),
        },
        "copy_model": copy_model_file,
    }
    (folder / "parent_fixtures.json").write_text(json.dumps(shared))
    return {PARENT_FIXTURES: str(folder / "parent_fixtures.json")}


@ahead_fixture
def tiny_run(root: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """One tiny real run shared by the tests that read a run folder back (never write into it: copy it)."""
    parent = _from_parent("tiny_run")
    if parent:
        run_dir = Path(parent.pop("run_dir"))
        return subprocess.CompletedProcess(**parent), run_dir
    run_dir = root / "run"
    return tx_train(*TINY, f"hydra.run.dir={run_dir}", cwd=root), run_dir


@ahead_fixture
def data_parallel_run(root: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """One TensorFlow data-parallel run (2 logical devices) of bucketed real text with the default logging,
    shared by the two tests that need one (tests/test_distribution.py, tests/test_parallel_text.py)."""
    from tests.test_parallel_text import _write_corpus

    run_dir = root / "run"
    result = tx_train(
        "data=parallel_text",
        f"data.path={_write_corpus(root)}",
        f"data.cache_dir={root / 'cache'}",
        "data.num_validation=12",
        "data.num_test=20",
        "data.vocab_size=200",
        "model=tiny",
        "trainer.epochs=1",
        "trainer.batching=bucket",
        "trainer.batch_tokens=96",
        "trainer.distribution=data_parallel",
        "trainer.devices=2",
        "export.enabled=false",
        f"hydra.run.dir={run_dir}",
        cwd=root,
    )
    return result, run_dir


@pytest.fixture(scope="session")
def copy_model(ahead):
    """A tiny Transformer trained on a short copy task until it emits EOS and stops on its own, for the
    decoders' tests (trained ahead, in a fresh process). Returns (model, test source ids)."""
    from tx_keras.data import build_task

    path = ahead.result("copy_model")
    model = keras.saving.load_model(path, compile=False, safe_mode=True)
    return model, build_task(COPY_TASK).splits["test"][0]


COPY_TASK = {"name": "copy", "seed": 0, "vocab_size": 8, "length": 6, "min_length": 3, "num_train": 1500,
             "num_validation": 8, "num_test": 48}  # fmt: skip


@job("copy_model")
def _copy_model(folder: Path) -> str:
    parent = _from_parent("copy_model")
    if parent:
        return parent
    path = folder / "copy_model.keras"
    script = f"from tests.conftest import train_copy_model; train_copy_model({str(path)!r})"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return str(path)


def train_copy_model(path: str) -> None:
    """What `copy_model` loads: trained in its own process, saved to `path`."""
    from tx_keras.data import build_task, make_dataset
    from tx_keras.models import ModelConfig, Transformer
    from tx_keras.training.step.masked_loss import MaskedCrossEntropy

    keras.utils.set_random_seed(0)
    task = build_task(COPY_TASK)
    model = Transformer(
        ModelConfig(num_encoder_layers=1, num_decoder_layers=2, d_model=32, num_heads=2, dff=64),
        len(task.source_vocab),
        len(task.target_vocab),
        task.source_length,
        task.target_length - 1,
    )
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=MaskedCrossEntropy())
    source, target = task.splits["train"]
    model((source[:1], target[:1, :-1]))
    model.optimizer.build(model.trainable_variables)  # as tx-train does: the step is traced once, not twice
    model.fit(make_dataset(*task.splits["train"], 64, shuffle=True), epochs=6, shuffle=False, verbose=0)
    model.save(path)
