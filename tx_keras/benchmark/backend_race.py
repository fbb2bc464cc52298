"""tx-bench's backend column: the synthetic training rows on several Keras backends, side by side.

Keras fixes its backend per process, so each backend's rows live in a worker process of their own
(`serve_rows`, worker_process.py). The workers build and warm up their models, then this parent asks them
for one timed window at a time, alternating which backend goes first (A B, B A, ...), exactly as tx-bench
interleaves models within one process: a load change on the shared machine lands on every row. The idle
worker blocks on its stdin and uses no CPU. JAX always compiles the step with XLA; TensorFlow runs with
`jit_compile=False` (its CPU default) and `True`, so the column separates XLA from the backend.

The parent's requests: `window 0|1` (one window, 1 = models in reverse order), `end` (close the precision
block). The worker's answers, one `{kind: value}` each: `ready` (parameters, machine), `warm` (a block's
row keys, its models built and warmed up), `window` (seconds per step of each row), `block` (the block's
matmul-only time and peak), `done`; or `error` (a peer of another size) instead of `ready`.
"""

from __future__ import annotations

import os
from dataclasses import asdict

from tx_keras.benchmark.adaptive_windows import timed_windows
from tx_keras.benchmark.flops import MATMUL_DTYPES, training_flops, utilisation
from tx_keras.benchmark.machine import machine
from tx_keras.benchmark.parity import ParityError
from tx_keras.benchmark.ratio_interval import geometric_mean
from tx_keras.benchmark.settings import BenchSettings, BenchSize, Timing
from tx_keras.benchmark.throughput import paired_ratio, spread
from tx_keras.benchmark.worker_process import Channel, WorkerProcess

# Which jit settings each backend's rows run with: XLA is JAX's only compiler, TensorFlow has both.
JIT_SETTINGS = {"tensorflow": [False, True], "jax": [True]}
REFERENCE = ("tensorflow", "ours:no-xla")  # tx-train's default: ratios are against it when it ran
ROWS = "tx_keras.benchmark.backend_race:serve_rows"  # the worker's function (worker_process.py)


class _Worker:
    """One backend's process."""

    def __init__(self, backend: str, spec: dict):
        self.backend = backend
        self._process = WorkerProcess(ROWS, {**spec, "backend": backend}, f"{backend} worker")

    def ask(self, command: str) -> None:
        self._process.ask(command)

    def answer(self, kind: str):
        """The next answer's value, which must be `kind`."""
        message = self._process.answer()
        if "error" in message:
            raise ParityError(message["error"])
        return message[kind]

    def close(self) -> None:
        self._process.close(kill=True)


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


def backend_race(backends: list[str], settings: BenchSettings) -> dict:
    """The synthetic training rows of every backend in `backends`, one worker process each, timed in
    interleaved windows; raises ParityError (a peer of another size) or WorkerFailed. Without
    `settings.precisions`, those the CPU multiplies natively (a GPU's are asked for by name)."""
    size, timing, precisions = settings.size, settings.timing, settings.precisions
    if precisions is None:
        bf16 = {"avx512_bf16", "amx_bf16"} & set(machine()["instructions"])
        precisions = ("float32", "mixed_bfloat16") if bf16 else ("float32",)
    spec = {
        "size": asdict(size),
        "timing": asdict(timing),
        "precisions": list(precisions),
        "jit": JIT_SETTINGS,
        "fused_qkv": settings.fused_qkv,
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
        "fused_qkv": settings.fused_qkv,
        "parameters": first["parameters"],
        "left_out": first["left_out"],
        "blocks": blocks,
    }


def serve_rows(spec: dict, channel: Channel) -> None:
    """In the worker: build, warm up and time `spec`'s rows on `spec["backend"]` as the parent's requests
    say (the module docstring's protocol). Imports Keras here, never in the parent."""
    import keras

    from tx_keras.benchmark.flops import real_training_flops
    from tx_keras.benchmark.matmul_peak import matmul_peak
    from tx_keras.benchmark.matmul_share import matmul_only_seconds
    from tx_keras.benchmark.parity import check_parity
    from tx_keras.benchmark.throughput import padding_share, real_tokens, window_step_times
    from tx_keras.benchmark.training_blocks import (
        backend_batch,
        builders,
        compiled_models,
        left_out_peers,
        parameter_counts,
    )

    backend = spec["backend"]
    size, timing = BenchSize(**spec["size"]), Timing(**spec["timing"])
    models = builders(size, spec["fused_qkv"])
    parameters = parameter_counts(models)
    try:
        check_parity(parameters)
    except ParityError as error:
        channel.answer({"error": str(error)})
        return
    versions = {"keras": keras.__version__, backend: __import__(backend).__version__}
    ready = {
        "parameters": parameters,
        "machine": machine(),
        "versions": versions,
        "left_out": left_out_peers(),
    }
    channel.answer({"ready": ready})
    for precision in spec["precisions"]:
        keras.backend.clear_session()
        rows = {}
        for jit in spec["jit"][backend]:
            for name, model in compiled_models(precision, jit, models).items():
                rows[f"{name}:{'xla' if jit else 'no-xla'}"] = model
        inputs, labels = backend_batch(size)
        for model in rows.values():
            for _ in range(timing.warmup):
                model.train_on_batch(inputs, labels)
        channel.answer({"warm": list(rows)})
        while (request := (channel.request() or "").split()) and request[0] == "window":
            times = window_step_times(rows, inputs, labels, timing.steps, reverse=request[1] == "1")
            channel.answer({"window": times})
        if not request:  # the parent is gone: nothing left to measure for
            return
        dtype = MATMUL_DTYPES[precision]
        matmuls = matmul_only_seconds(size, dtype, timing.repeats)
        source, labels_array = keras.ops.convert_to_numpy(inputs[0]), keras.ops.convert_to_numpy(labels)
        block = {
            "matmul_only_s": matmuls,
            "matmul_only_flops_per_s": training_flops(size) / matmuls,
            "peak_flops_per_s": matmul_peak(dtype, timing.matmul_size),
            "real_tokens": real_tokens(source, labels_array),
            "real_training_flops": real_training_flops(size, source, labels_array),
            "padding_share": padding_share(source, labels_array),
            "rows": {
                key: {
                    "precision": model.dtype_policy.name,
                    "jit_compile": bool(model.jit_compile),
                    "parameters": int(model.count_params()),
                }
                for key, model in rows.items()
            },
        }
        channel.answer({"block": block})
    channel.answer({"done": True})
