"""tx-bench's backend column: each backend's synthetic training rows in a process of its own, windows
interleaved across the processes, one table; and `tx-bench --backend jax` on a Python without TensorFlow."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tx_keras.benchmark import backend_race
from tx_keras.benchmark.flops import training_flops
from tx_keras.benchmark.report import render_backends
from tx_keras.benchmark.settings import QUICK_SIZE, BenchSettings, Timing
from tx_keras.cli.bench import main

# On PYTHONPATH: a Python where `import tensorflow` fails as where it is not installed.
NO_TENSORFLOW = str(Path(__file__).parent / "fixtures" / "no_tensorflow")


def without_tensorflow(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": NO_TENSORFLOW, **extra}


class _FakeWorker:
    """A backend worker answering from fixed seconds per step: ours 0.1 s on TensorFlow without XLA,
    0.05 s with it, 0.08 s on JAX; keras_mha twice ours; every window of a backend alike but the last
    one's, when TensorFlow (no XLA) is 0.2 s."""

    log: list[str] = []
    seconds = {
        "tensorflow": {"ours:no-xla": 0.1, "ours:xla": 0.05, "keras_mha:no-xla": 0.2, "keras_mha:xla": 0.1},
        "jax": {"ours:xla": 0.08, "keras_mha:xla": 0.16},
    }
    peaks = {"tensorflow": 4e9, "jax": 5e9}

    def __init__(self, backend, spec):
        self.backend, self.spec, self.windows = backend, spec, 0

    def ask(self, command):
        self.log.append(f"{self.backend} {command}")
        self.last = command

    def answer(self, kind):
        if kind == "warm":
            return list(self.seconds[self.backend])
        if kind == "ready":
            return {
                "parameters": {"ours": 100, "keras_mha": 100},
                "machine": {
                    "cpu": "test CPU",
                    "cores": 2,
                    "instructions": [],
                    "gpus": [],
                    "date": "d",
                    "load_average": [1.0],
                },
                "versions": {"keras": "3", self.backend: "1"},
                "left_out": {},
            }
        if kind == "window":
            self.windows += 1
            last = self.windows == self.spec["timing"]["windows"]
            return {
                key: [0.2 if last and key == "ours:no-xla" else value, value / 2]
                for key, value in self.seconds[self.backend].items()
            }
        if kind == "block":
            keys = self.seconds[self.backend]
            return {
                "matmul_only_s": 0.04,
                "matmul_only_flops_per_s": 1e9,
                "peak_flops_per_s": self.peaks[self.backend],
                "real_tokens": 600,
                "real_training_flops": 2e8,
                "padding_share": 0.25,
                "rows": {
                    key: {"precision": "float32", "jit_compile": key.endswith(":xla"), "parameters": 100}
                    for key in keys
                },
            }
        return True

    def close(self):
        self.log.append(f"{self.backend} closed")


@pytest.fixture
def fake_race(monkeypatch):
    monkeypatch.setattr(backend_race, "_Worker", _FakeWorker)
    _FakeWorker.log = []
    timing = Timing(windows=4, time_cap_s=0.0)  # stops at the fewest windows: their ratios are wide
    settings = BenchSettings(QUICK_SIZE, timing, precisions=("float32",))
    return backend_race.backend_race(["tensorflow", "jax"], settings)


def test_windows_alternate_which_backend_goes_first(fake_race):
    windows = [line for line in _FakeWorker.log if "window" in line]
    assert windows == [
        "tensorflow window 0",
        "jax window 0",
        "jax window 1",
        "tensorflow window 1",
        "tensorflow window 0",
        "jax window 0",
        "jax window 1",
        "tensorflow window 1",
    ]
    assert _FakeWorker.log[-2:] == ["tensorflow closed", "jax closed"]


def test_rows_ratios_and_mfu_worked_by_hand(fake_race):
    block = fake_race["blocks"][0]
    rows = {(row["backend"], row["model"], row["jit_compile"]): row for row in block["rows"]}
    assert set(rows) == {
        ("tensorflow", "ours", False),
        ("tensorflow", "ours", True),
        ("jax", "ours", True),
        ("tensorflow", "keras_mha", False),
        ("tensorflow", "keras_mha", True),
        ("jax", "keras_mha", True),
    }
    jax = rows[("jax", "ours", True)]
    assert jax["step_s"] == pytest.approx(0.08) and jax["tokens_per_s"] == pytest.approx(600 / 0.08)
    # against TensorFlow without XLA in the same window: 0.1/0.08 three times, 0.2/0.08 once -> the
    # geometric mean 1.25 x 2^(1/4); by CPU time (half the wall time, the last window too) 1.25 each time
    speed = jax["speed_vs_reference"]
    assert speed["wall"]["ratio"] == pytest.approx(1.25 * 2**0.25)
    assert speed["wall"]["low"] < 1.25 < 2.5 < speed["wall"]["high"]  # 4 windows, one far off: wide
    assert speed["cpu"]["low"] == pytest.approx(1.25) == speed["cpu"]["high"]
    assert rows[("tensorflow", "ours", False)]["step_s"] == pytest.approx(0.1 * 2**0.25)
    assert block["windows"]["windows"] == 4 and block["windows"]["reason"] == "time cap"
    # one ceiling for every row: the best peak of either backend; MFU counts the real tokens' FLOPs
    assert block["peak_flops_per_s"] == 5e9
    assert jax["mfu"] == pytest.approx(2e8 / 0.08 / 5e9)
    assert jax["mfu_positions_own_peak"] == pytest.approx(training_flops(QUICK_SIZE) / 0.08 / 5e9)
    assert jax["matmul_share"] == pytest.approx(0.04 / 0.08)
    table = render_backends(fake_race)
    assert table.count("ours (tx_keras Transformer)") == 4  # three rows and the speed note
    jax_line = next(line for line in table.splitlines() if "jax " in line and "ours" in line)
    assert jax_line.split()[3:6] == ["jax", "on", f"{600 / 0.08:,.0f}"]
    primary = speed[block["windows"]["primary"]]
    assert jax_line.endswith(f"{primary['ratio']:.2f}x ({primary['low']:.2f}-{primary['high']:.2f})")


def test_bad_backend_is_one_line_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--backend", "tensorflow,torch"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "tx-bench: error: --backend tensorflow,torch: choose from tensorflow, jax, each once\n"
    )


@pytest.mark.slow  # a JAX bench process: ~18 s loaded
def test_the_jax_rows_import_no_tensorflow_and_the_parent_no_keras():
    """What `tx-bench --backend jax`, a backend worker and a JAX run of an embedded task import, on a
    Python that has no TensorFlow; the parent of the workers imports no Keras at all (it would fix a
    backend). Every import must succeed (one that reached for TensorFlow would end the script with
    `No module named 'tensorflow'` before its last line), and the fixture must really hide TensorFlow."""
    script = (
        "import sys\n"
        "import tx_keras.benchmark.backend_race, tx_keras.benchmark.report, tx_keras.cli.bench\n"
        "assert 'keras' not in sys.modules, 'the parent imported Keras'\n"
        "import tx_keras.benchmark.training_blocks, tx_keras.benchmark.worker_process, keras\n"
        "import tx_keras.training.run.orchestrator, tx_keras.data.symbol_tasks\n"
        "import tx_keras.data.batching.input_batches\n"
        "assert keras.backend.backend() == 'jax' and 'tensorflow' not in sys.modules\n"
        "print('imported without TensorFlow')\n"
        "try:\n"
        "    import tensorflow\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=without_tensorflow(KERAS_BACKEND="jax"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["imported without TensorFlow", "No module named 'tensorflow'"]


@pytest.mark.slow
def test_tx_bench_backend_jax_runs_without_tensorflow():
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.bench", "--backend", "jax", "--quick", "--json"],
        env=without_tensorflow(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["backend"] == "jax" and report["machine"]["onednn"] is None
    assert report["left_out_parts"] and "decoding" not in report
    for block in report["blocks"]:
        assert {row["jit_compile"] for row in block["rows"].values()} == {True}
        assert {row["precision"] for row in block["rows"].values()} == {block["precision"]}
        for row in block["rows"].values():
            assert 0 < row["mfu"] <= 1 and row["tokens_per_s"] > 0


@pytest.mark.slow
def test_quick_backend_column():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tx_keras.cli.bench",
            "--backend",
            "tensorflow,jax",
            "--quick",
            "--json",
            "--precisions",
            "float32",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert set(report["backends"]) == {"tensorflow", "jax"}
    (block,) = report["blocks"]
    seen = {(row["backend"], row["model"], row["jit_compile"]) for row in block["rows"]}
    assert {("tensorflow", "ours", False), ("tensorflow", "ours", True), ("jax", "ours", True)} <= seen
    for row in block["rows"]:
        assert row["precision"] == "float32" and 0 < row["mfu"] <= 1
        assert len(row["window_tokens_per_s"]) == block["windows"]["windows"] >= report["timing"]["windows"]
