"""Everything `tx-bench` measures in one run, returned as one JSON-ready dict.

Training is compared in matched blocks: one per precision policy, inside which ours and both peers run
under that policy, the same jit setting, batch, optimizer and loss, timed in interleaved windows.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass

import keras
import tensorflow as tf

from tx_keras.benchmark import peers
from tx_keras.benchmark.decoding_speed import decoding_model, decoding_rates, saved_model_rate
from tx_keras.benchmark.flops import MATMUL_DTYPES, PeakExceeded, matmul_peak, training_flops, utilisation
from tx_keras.benchmark.machine import machine
from tx_keras.benchmark.matmul_share import matmul_only_seconds
from tx_keras.benchmark.real_path import RealPathSize, real_path_row
from tx_keras.benchmark.size import BenchSize
from tx_keras.benchmark.throughput import (
    interleaved_step_times,
    padding_share,
    real_tokens,
    spread,
    synthetic_batch,
)
from tx_keras.training.masked_loss import MaskedCrossEntropy
from tx_keras.training.precision import cpu_has_bfloat16, precision_policy

PARITY_TOLERANCE = 0.02  # peers whose parameter count differs from ours by more do not do the same work


@dataclass(frozen=True)
class Timing:
    """How long to measure: interleaved training windows x steps after a warm-up; decoding repeats;
    peak matmul n; decoding lengths."""

    windows: int = 7
    steps: int = 10
    warmup: int = 3
    repeats: int = 3
    matmul_size: int = 2048
    outputs: tuple[int, ...] = (32, 64)


class ParityError(ValueError):
    """The models of a comparison differ in size, so their speeds are not comparable."""


def check_parity(parameters: dict[str, int], tolerance: float = PARITY_TOLERANCE) -> None:
    """Raise ParityError naming every model whose parameter count is more than `tolerance` from ours."""
    ours = parameters["ours"]
    off = {name: count for name, count in parameters.items() if abs(count - ours) > tolerance * ours}
    if off:
        listed = ", ".join(
            f"{name} {count:,} ({100 * (count / ours - 1):+.1f} %)" for name, count in off.items()
        )
        raise ParityError(
            f"parameter counts differ by more than {100 * tolerance:.0f} % from ours ({ours:,}): {listed}; "
            "the models would not do the same work, so no comparison is made"
        )


def supported_precisions() -> list[str]:
    """float32 always; mixed_bfloat16 where the CPU multiplies bf16 natively; mixed_float16 on a GPU."""
    precisions = ["float32"]
    if cpu_has_bfloat16():
        precisions.append("mixed_bfloat16")
    if tf.config.list_physical_devices("GPU"):
        precisions.append("mixed_float16")
    return precisions


def resolve_jit(jit_compile: bool | str) -> bool:
    """`auto` as Keras decides it for ours and the peers alike: XLA on with a GPU, off on a CPU."""
    if jit_compile == "auto":
        return bool(tf.config.list_physical_devices("GPU"))
    return bool(jit_compile)


def _builders(size: BenchSize, fused_qkv: bool) -> dict[str, Callable[[], keras.Model]]:
    builders = {"ours": lambda: peers.ours(size, fused_qkv), "keras_mha": lambda: peers.keras_mha(size)}
    if peers.keras_hub_installed():
        builders["keras_hub"] = lambda: peers.keras_hub(size)
    return builders


def left_out_peers() -> dict[str, str]:
    """Peers this run cannot race, with why: a table without its KerasHub column must say so, or it
    reads as if KerasHub had been measured and dropped."""
    if peers.keras_hub_installed():
        return {}
    return {"keras_hub": "not installed (pip install -e '.[bench]' adds it)"}


def parameter_counts(builders: dict[str, Callable[[], keras.Model]]) -> dict[str, int]:
    keras.backend.clear_session()
    counts = {name: int(build().count_params()) for name, build in builders.items()}
    keras.backend.clear_session()
    return counts


def precision_block(
    precision: str, jit_compile: bool, builders: dict, size: BenchSize, timing: Timing, peak: Callable
) -> dict:
    """Ours and the peers built under `precision`, compiled alike, timed in interleaved windows."""
    keras.backend.clear_session()
    models = {}
    for name, build in builders.items():
        with precision_policy(precision):
            model = build()
            model.compile(
                optimizer=keras.optimizers.Adam(1e-4), loss=MaskedCrossEntropy(), jit_compile=jit_compile
            )
        models[name] = model
    inputs, labels = synthetic_batch(size)
    times, cpu = interleaved_step_times(models, inputs, labels, timing.windows, timing.steps, timing.warmup)
    real = real_tokens(inputs[0], labels)
    dtype = MATMUL_DTYPES[precision]
    rows = {}
    for name, model in models.items():
        step = statistics.median(times[name])
        rows[name] = {
            "precision": model.dtype_policy.name,
            "jit_compile": bool(model.jit_compile),
            "parameters": int(model.count_params()),
            "step_s": step,
            "cpu_step_s": statistics.median(cpu[name]),
            "tokens_per_s": real / step,
            "positions_per_s": size.tokens_per_step / step,
            "spread": spread(times[name]),
            "window_tokens_per_s": [real / seconds for seconds in times[name]],
            "flops_per_s": training_flops(size) / step,
        }
    matmuls = matmul_only_seconds(size, dtype, timing.repeats)
    matmul_rate = training_flops(size) / matmuls
    # The step's own products run alone are dense matmuls too: a ceiling below their rate is too low.
    ceiling = peak(dtype, max(row["flops_per_s"] for row in rows.values()), matmul_rate)
    for row in rows.values():
        row["mfu"] = utilisation(row["flops_per_s"], ceiling)
        row["matmul_share"] = matmuls / row["step_s"]
    ratios = {}
    for peer in models:
        if peer != "ours":
            paired = [theirs / ours for ours, theirs in zip(times["ours"], times[peer], strict=True)]
            paired_cpu = [theirs / ours for ours, theirs in zip(cpu["ours"], cpu[peer], strict=True)]
            ratios[f"ours/{peer}"] = {
                "median": statistics.median(paired),
                "min": min(paired),
                "max": max(paired),
                "cpu_median": statistics.median(paired_cpu),
            }
    keras.backend.clear_session()
    return {
        "precision": precision,
        "jit_compile": jit_compile,
        "matmul_dtype": dtype,
        "peak_flops_per_s": ceiling,
        "matmul_only_s": matmuls,
        "matmul_only_flops_per_s": matmul_rate,
        "padding_share": padding_share(inputs[0], labels),
        "rows": rows,
        "ratios": ratios,
    }


def run_benchmark(
    size: BenchSize,
    timing: Timing,
    precisions: list[str],
    jit_compile: bool | str = "auto",
    fused_qkv: bool = False,
    real_path: RealPathSize | None = None,
    saved_model: bool = True,
) -> dict:
    """Parity check, matched precision blocks, the real training path (when `real_path` is given),
    decoding speed.

    Raises ParityError before timing anything when a peer's size differs from ours by more than 2 %.
    """
    started_on = machine()  # the load and date when timing starts
    builders = _builders(size, fused_qkv)
    parameters = parameter_counts(builders)
    check_parity(parameters)
    peaks: dict[str, float] = {}

    def peak(dtype: str, fastest: float, measured: float = 0.0) -> float:
        """The dtype's matmul peak: the best of its measurements and of `measured` (another dense matmul
        rate seen in this run); measured again (the best counts) if a model outran it, since a ceiling
        measured while the machine was busy is too low."""
        if measured > peaks.get(dtype, float("inf")):
            peaks[dtype] = measured
        for _ in range(3):
            if dtype in peaks and peaks[dtype] >= fastest:
                break
            peaks[dtype] = max(peaks.get(dtype, 0.0), matmul_peak(dtype, timing.matmul_size))
        if peaks[dtype] < fastest:
            raise PeakExceeded(
                f"a model outran the {dtype} matmul peak three times: rerun on a quieter machine"
            )
        return peaks[dtype]

    jit = resolve_jit(jit_compile)
    for precision in precisions:
        peak(MATMUL_DTYPES[precision], 0.0)
    blocks = [precision_block(p, jit, builders, size, timing, peak) for p in precisions]
    results: dict = {
        "machine": started_on,
        "size": asdict(size),
        "timing": asdict(timing),
        "fused_qkv": fused_qkv,
        "parameters": parameters,
        "left_out": left_out_peers(),
        "peak_flops_per_s": peaks,
        "blocks": blocks,
    }
    if real_path is not None:
        results["real_path"] = real_path_row(real_path)
    keras.backend.clear_session()
    decoding: dict = {}
    model = decoding_model(size, max(timing.outputs))
    for outputs in timing.outputs:
        decoding[str(outputs)] = decoding_rates(model, size, outputs, timing.repeats)
    if saved_model:
        decoding[f"saved_model_{max(timing.outputs)}"] = saved_model_rate(model, size, timing.repeats)
    results["decoding"] = decoding
    results["machine"]["load_average_end"] = [round(value, 2) for value in os.getloadavg()]
    return results
