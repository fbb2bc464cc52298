"""tx-bench's backend column: the synthetic training rows on several Keras backends, side by side.

Keras fixes its backend per process, so each backend's rows live in a worker process of their own
(cli/bench_worker.py). The workers build and warm up their models, then this parent asks them for one
timed window at a time, alternating which backend goes first (A B, B A, ...), exactly as tx-bench
interleaves models within one process: a load change on the shared machine lands on every row. The idle
worker blocks on its stdin and uses no CPU. JAX always compiles the step with XLA; TensorFlow runs with
`jit_compile=False` (its CPU default) and `True`, so the column separates XLA from the backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict

from tx_keras.benchmark.adaptive_windows import timed_windows
from tx_keras.benchmark.flops import MATMUL_DTYPES, training_flops, utilisation
from tx_keras.benchmark.parity import ParityError
from tx_keras.benchmark.ratio_interval import geometric_mean
from tx_keras.benchmark.size import BenchSize
from tx_keras.benchmark.throughput import paired_ratio, spread
from tx_keras.benchmark.timing import Timing
from tx_keras.benchmark.worker_process import WorkerFailed

# Which jit settings each backend's rows run with: XLA is JAX's only compiler, TensorFlow has both.
JIT_SETTINGS = {"tensorflow": [False, True], "jax": [True]}
REFERENCE = ("tensorflow", "ours:no-xla")  # tx-train's default: ratios are against it when it ran
WORKER = "tx_keras.cli.bench_worker"
PREFIX = "TXB "


class _Worker:
    """One backend's process and its line protocol."""

    def __init__(self, backend: str, spec: dict):
        self.backend = backend
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", WORKER, backend, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )

    def ask(self, command: str) -> None:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def answer(self, kind: str):
        """The next `TXB` line's value, which must be `kind`."""
        for line in self.process.stdout:
            if line.startswith(PREFIX):
                message = json.loads(line[len(PREFIX) :])
                if "error" in message:
                    raise ParityError(message["error"])
                return message[kind]
        self.process.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].strip()
        raise WorkerFailed(
            f"the {self.backend} worker exited with code {self.process.returncode} before its {kind}: {tail}"
        )

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


def _block(precision: str, workers: list[_Worker], timing: Timing, size: BenchSize) -> dict:
    """One precision: every worker's rows timed in windows interleaved across the processes, until each
    row's ratio to the reference is known (adaptive_windows.py)."""
    keys = []
    for worker in workers:
        keys += [(worker.backend, key) for key in worker.answer("warm")]
    reference = REFERENCE if REFERENCE in keys else keys[0]

    def one_window(window: int) -> dict:
        times = {}
        for worker in workers if window % 2 == 0 else workers[::-1]:
            worker.ask(f"window {window % 2}")
            times.update({(worker.backend, key): value for key, value in worker.answer("window").items()})
        return times

    pairs = [(reference, key) for key in keys if key != reference]
    wall, cpu, stop = timed_windows(one_window, pairs, timing, timing.steps)
    closing = {}
    for worker in workers:
        worker.ask("end")
        closing[worker.backend] = worker.answer("block")
    # One ceiling for every row: the machine's best dense matmul rate of this dtype on any backend.
    ceiling = max(
        max(block["peak_flops_per_s"], block["matmul_only_flops_per_s"]) for block in closing.values()
    )
    rows = []
    for (backend, key), times in wall.items():
        block = closing[backend]
        step = geometric_mean(times)
        real = block["real_tokens"]
        flops_per_s = training_flops(size) / step
        rows.append(
            {
                "backend": backend,
                "model": key.split(":")[0],
                **block["rows"][key],
                "step_s": step,
                "cpu_step_s": geometric_mean(cpu[(backend, key)]),
                "window_step_s": times,
                "window_cpu_step_s": cpu[(backend, key)],
                "tokens_per_s": real / step,
                "positions_per_s": size.tokens_per_step / step,
                "spread": spread(times),
                "window_tokens_per_s": [real / seconds for seconds in times],
                "flops_per_s": flops_per_s,
                "real_flops_per_s": block["real_training_flops"] / step,
                "mfu": utilisation(block["real_training_flops"] / step, ceiling),
                "mfu_positions_own_peak": utilisation(flops_per_s, ceiling),  # this run's own ceiling
                "matmul_share": block["matmul_only_s"] / step,
                "speed_vs_reference": paired_ratio(
                    (times, cpu[(backend, key)]), (wall[reference], cpu[reference])
                ),
            }
        )
    return {
        "precision": precision,
        "matmul_dtype": MATMUL_DTYPES[precision],
        "peak_flops_per_s": ceiling,
        "peaks_by_backend": {backend: block["peak_flops_per_s"] for backend, block in closing.items()},
        "matmul_only_s": {backend: block["matmul_only_s"] for backend, block in closing.items()},
        "padding_share": next(iter(closing.values()))["padding_share"],
        "reference": {"backend": reference[0], "model": reference[1].split(":")[0], "jit_compile": False},
        "windows": stop,
        "rows": rows,
    }


def backend_race(
    backends: list[str], size: BenchSize, timing: Timing, precisions: list[str], fused_qkv: bool
) -> dict:
    """The synthetic training rows of every backend in `backends`, one worker process each, timed in
    interleaved windows; raises ParityError (a peer of another size) or WorkerFailed."""
    spec = {
        "size": asdict(size),
        "timing": asdict(timing),
        "precisions": precisions,
        "jit": JIT_SETTINGS,
        "fused_qkv": fused_qkv,
    }
    workers = [_Worker(backend, spec) for backend in backends]
    try:
        ready = {worker.backend: worker.answer("ready") for worker in workers}
        blocks = [_block(precision, workers, timing, size) for precision in precisions]
        for worker in workers:
            worker.answer("done")
    finally:
        for worker in workers:
            worker.close()
    first = ready[backends[0]]
    return {
        "machine": {
            **first["machine"],
            "backend": None,
            "gpus": sorted({gpu for info in ready.values() for gpu in info["machine"]["gpus"]}),
            "load_average_end": [round(value, 2) for value in os.getloadavg()],
        },
        "backends": {
            backend: {"versions": info["versions"], "jit_compile": JIT_SETTINGS[backend]}
            for backend, info in ready.items()
        },
        "size": asdict(size),
        "timing": asdict(timing),
        "fused_qkv": fused_qkv,
        "parameters": first["parameters"],
        "left_out": first["left_out"],
        "blocks": blocks,
    }
