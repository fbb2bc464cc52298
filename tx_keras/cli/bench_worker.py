"""One backend's side of `tx-bench --backend tensorflow,jax`: a process of its own (Keras fixes its backend
per process) that builds the synthetic training rows and times one window whenever its parent asks, so the
parent can interleave the windows of both backends as tx-bench interleaves models within one.

Protocol: the parent writes commands on stdin (`window 0|1`: one window, 1 = models in reverse order;
`end`: close the precision block); the worker answers each with one line `TXB <json>` on stdout (other
stdout lines are ignored): `ready` (parameters, machine), `warm` (a block's row keys, its models built and
warmed up), `window` (seconds per step of each row), `block` (the block's matmul-only time and peak), `done`.
"""

from __future__ import annotations

import json
import sys

from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.keras_backend import select_backend

PREFIX = "TXB "


def _say(kind: str, value: object) -> None:
    print(PREFIX + json.dumps({kind: value}), flush=True)


def _command() -> list[str]:
    line = sys.stdin.readline()
    if not line:  # the parent is gone: nothing left to measure for
        sys.exit(0)
    return line.split()


def serve(backend: str, spec: dict) -> None:
    """Build, warm up and time `spec`'s rows on `backend` as the parent's commands say."""
    import keras

    from tx_keras.benchmark.flops import MATMUL_DTYPES, real_training_flops, training_flops
    from tx_keras.benchmark.machine import machine
    from tx_keras.benchmark.matmul_peak import matmul_peak
    from tx_keras.benchmark.matmul_share import matmul_only_seconds
    from tx_keras.benchmark.parity import ParityError, check_parity
    from tx_keras.benchmark.size import BenchSize
    from tx_keras.benchmark.throughput import padding_share, real_tokens, window_step_times
    from tx_keras.benchmark.training_blocks import (
        backend_batch,
        builders,
        compiled_models,
        left_out_peers,
        parameter_counts,
    )

    size = BenchSize(**spec["size"])
    timing = spec["timing"]
    models = builders(size, spec["fused_qkv"])
    parameters = parameter_counts(models)
    try:
        check_parity(parameters)
    except ParityError as error:
        _say("error", str(error))
        sys.exit(2)
    versions = {"keras": keras.__version__}
    backend_module = __import__(backend)
    versions[backend] = backend_module.__version__
    _say(
        "ready",
        {"parameters": parameters, "machine": machine(), "versions": versions, "left_out": left_out_peers()},
    )
    for precision in spec["precisions"]:
        keras.backend.clear_session()
        rows = {}
        for jit in spec["jit"][backend]:
            for name, model in compiled_models(precision, jit, models).items():
                rows[f"{name}:{'xla' if jit else 'no-xla'}"] = model
        inputs, labels = backend_batch(size)
        for model in rows.values():
            for _ in range(timing["warmup"]):
                model.train_on_batch(inputs, labels)
        _say("warm", list(rows))
        while (command := _command())[0] == "window":
            times = window_step_times(rows, inputs, labels, timing["steps"], reverse=command[1] == "1")
            _say("window", times)
        dtype = MATMUL_DTYPES[precision]
        matmuls = matmul_only_seconds(size, dtype, timing["repeats"])
        source, labels_array = keras.ops.convert_to_numpy(inputs[0]), keras.ops.convert_to_numpy(labels)
        _say(
            "block",
            {
                "matmul_only_s": matmuls,
                "matmul_only_flops_per_s": training_flops(size) / matmuls,
                "peak_flops_per_s": matmul_peak(dtype, timing["matmul_size"]),
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
            },
        )
    _say("done", True)


def main() -> None:
    backend, spec = sys.argv[1], json.loads(sys.argv[2])
    select_backend(backend)  # before Keras's first import
    configure_allocator()  # as tx-bench's and tx-train's own process
    if backend == "tensorflow":
        from tx_keras.runtime.quiet_startup import start_tensorflow

        start_tensorflow()
    serve(backend, spec)


if __name__ == "__main__":
    main()
