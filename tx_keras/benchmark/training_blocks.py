"""tx-bench's synthetic training rows, on whichever Keras backend this process runs: matched precision
blocks, parameter parity, MFU against a measured matmul peak. Imports no TensorFlow, so a machine with
JAX and no TensorFlow runs them (`tx-bench --backend jax`).

Training is compared in matched blocks: one per precision policy, inside which ours and both peers run
under that policy, the same jit setting, batch, optimizer and loss, timed in interleaved windows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict

import keras

from tx_keras.benchmark import peers
from tx_keras.benchmark.compared_pairs import compared_pairs
from tx_keras.benchmark.flops import (
    MATMUL_DTYPES,
    PeakExceeded,
    real_training_flops,
    training_flops,
    utilisation,
)
from tx_keras.benchmark.library_peaks import best_peaks, library_peaks
from tx_keras.benchmark.machine import ONEDNN_STATES, machine
from tx_keras.benchmark.matmul_peak import matmul_peak
from tx_keras.benchmark.matmul_share import matmul_only_seconds
from tx_keras.benchmark.parity import check_parity
from tx_keras.benchmark.ratio_interval import geometric_mean
from tx_keras.benchmark.settings import BenchSettings, BenchSize, Timing
from tx_keras.benchmark.throughput import (
    interleaved_step_times,
    padding_share,
    paired_ratio,
    real_tokens,
    spread,
    synthetic_batch,
)
from tx_keras.runtime.accelerators import gpu_names
from tx_keras.training.step.fused_adam import FusedAdam
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.precision import cpu_has_bfloat16, precision_policy


def supported_precisions() -> list[str]:
    """float32 always; mixed_bfloat16 where the CPU multiplies bf16 natively or on a GPU (JAX's
    precision of choice there); mixed_float16 on a GPU."""
    precisions = ["float32"]
    gpu = bool(gpu_names())
    if cpu_has_bfloat16() or gpu:
        precisions.append("mixed_bfloat16")
    if gpu:
        precisions.append("mixed_float16")
    return precisions


def resolve_jit(jit_compile: bool | str) -> bool:
    """`auto` as Keras decides it for ours and the peers alike: XLA on with a GPU, off on a CPU (JAX
    always compiles with XLA, so `auto` is on there)."""
    if jit_compile == "auto":
        return keras.backend.backend() == "jax" or bool(gpu_names())
    return bool(jit_compile)


def builders(
    size: BenchSize, fused_qkv: bool, every_position: bool = False
) -> dict[str, Callable[[], keras.Model]]:
    """Ours and the peers this machine has, by name; with `every_position` also ours computing every
    position (`ours_every_position`: no gather of the real rows, the peers' work)."""
    built = {"ours": lambda: peers.ours(size, fused_qkv)}
    if every_position:
        built["ours_every_position"] = lambda: peers.ours(size, fused_qkv, every_position=True)
    built["keras_mha"] = lambda: peers.keras_mha(size)
    if peers.keras_hub_installed():
        built["keras_hub"] = lambda: peers.keras_hub(size)
    return built


def left_out_peers() -> dict[str, str]:
    """Peers this run cannot race, with why: a table without its KerasHub column must say so, or it
    reads as if KerasHub had been measured and dropped."""
    if peers.keras_hub_installed():
        return {}
    return {"keras_hub": "not installed (pip install -e '.[bench]' adds it)"}


def parameter_counts(models: dict[str, Callable[[], keras.Model]]) -> dict[str, int]:
    keras.backend.clear_session()
    counts = {name: int(build().count_params()) for name, build in models.items()}
    keras.backend.clear_session()
    return counts


class PeakCeiling:
    """Each dtype's matmul peak on this machine: the best of its measurements and of any other dense
    matmul rate seen in the run, measured again (the best counts) if a model outran it, since a ceiling
    measured while the machine was busy is too low."""

    def __init__(self, matmul_size: int):
        self.matmul_size = matmul_size
        self.peaks: dict[str, float] = {}

    def __call__(self, dtype: str, fastest: float, measured: float = 0.0) -> float:
        if measured > self.peaks.get(dtype, float("inf")):
            self.peaks[dtype] = measured
        for _ in range(3):
            if dtype in self.peaks and self.peaks[dtype] >= fastest:
                break
            self.peaks[dtype] = max(self.peaks.get(dtype, 0.0), matmul_peak(dtype, self.matmul_size))
        if self.peaks[dtype] < fastest:
            raise PeakExceeded(
                f"a model outran the {dtype} matmul peak three times: rerun on a quieter machine"
            )
        return self.peaks[dtype]


def compiled_models(
    precision: str, jit_compile: bool, models: dict[str, Callable[[], keras.Model]]
) -> dict[str, keras.Model]:
    """Every model built under `precision` and compiled alike (optimizer, loss, jit). The optimizer is
    the trainer's `FusedAdam` for every model (docs/decisions/fused-adam.md): a peer is timed
    with the update users train with, and the same one as ours."""
    compiled = {}
    for name, build in models.items():
        with precision_policy(precision):
            model = build()
            model.compile(optimizer=FusedAdam(1e-4), loss=MaskedCrossEntropy(), jit_compile=jit_compile)
        compiled[name] = model
    return compiled


def backend_batch(size: BenchSize) -> tuple[tuple, object]:
    """The synthetic batch as tensors of the running backend, converted once, not at every step."""
    (source, target), labels = synthetic_batch(size)
    to_tensor = keras.ops.convert_to_tensor
    return (to_tensor(source), to_tensor(target)), to_tensor(labels)


def row(
    model: keras.Model, size: BenchSize, real: int, real_flops: int, times: list[float], cpu: list[float]
) -> dict:
    """One model's figures from its windows' seconds per step: the geometric mean of the windows, so the
    ratio of two rows is the mean of their paired window ratios (ratio_interval.py). MFU and matmul share
    come later."""
    step = geometric_mean(times)
    return {
        "precision": model.dtype_policy.name,
        "jit_compile": bool(model.jit_compile),
        "parameters": int(model.count_params()),
        "step_s": step,
        "cpu_step_s": geometric_mean(cpu),
        "window_step_s": times,
        "window_cpu_step_s": cpu,
        "tokens_per_s": real / step,
        "positions_per_s": size.tokens_per_step / step,
        "spread": spread(times),
        "window_tokens_per_s": [real / seconds for seconds in times],
        "flops_per_s": training_flops(size) / step,
        "real_flops_per_s": real_flops / step,
    }


def precision_block(
    precision: str,
    jit_compile: bool,
    models: dict,
    size: BenchSize,
    timing: Timing,
    peak: Callable,
    best_peak: dict[str, float],
) -> dict:
    """Ours and the peers built under `precision`, compiled alike, timed in interleaved windows until
    their ratios are known (adaptive_windows.py).

    Two MFUs per row: `mfu`, FLOPs on real tokens over the best rate of the block's matmul dtype in any
    kernel library (`best_peak`, library_peaks.py), and `mfu_positions_own_peak`, FLOPs on every
    computed position over the peak in this process's own library: the figure tx-bench printed before,
    which counts padding as work and lets a slow library flatter it."""
    keras.backend.clear_session()
    built = compiled_models(precision, jit_compile, models)
    inputs, labels = backend_batch(size)
    times, cpu, stop = interleaved_step_times(built, inputs, labels, timing)
    source, labels_array = keras.ops.convert_to_numpy(inputs[0]), keras.ops.convert_to_numpy(labels)
    real = real_tokens(source, labels_array)
    real_flops = real_training_flops(size, source, labels_array)
    dtype = MATMUL_DTYPES[precision]
    rows = {name: row(model, size, real, real_flops, times[name], cpu[name]) for name, model in built.items()}
    matmuls = matmul_only_seconds(size, dtype, timing.repeats)
    matmul_rate = training_flops(size) / matmuls
    # The step's own products run alone are dense matmuls too: a ceiling below their rate is too low.
    ceiling = peak(dtype, max(entry["flops_per_s"] for entry in rows.values()), matmul_rate)
    best = max(ceiling, best_peak.get(dtype, 0.0))
    for entry in rows.values():
        entry["mfu"] = utilisation(entry["real_flops_per_s"], best)
        entry["mfu_positions_own_peak"] = utilisation(entry["flops_per_s"], ceiling)
        entry["matmul_share"] = matmuls / entry["step_s"]
    ratios = {
        f"{mine}/{other}": paired_ratio((times[mine], cpu[mine]), (times[other], cpu[other]))
        for mine, other in compared_pairs(built)
    }
    keras.backend.clear_session()
    return {
        "precision": precision,
        "jit_compile": jit_compile,
        "matmul_dtype": dtype,
        "peak_flops_per_s": ceiling,
        "best_peak_flops_per_s": best,
        "matmul_only_s": matmuls,
        "matmul_only_flops_per_s": matmul_rate,
        "padding_share": padding_share(source, labels_array),
        "real_training_flops": real_flops,
        "windows": stop,
        "rows": rows,
        "ratios": ratios,
    }


def training_blocks(settings: BenchSettings) -> dict:
    """Parity check, then one matched block per precision (`settings.precisions`, or those this machine
    supports); the start of a tx-bench result.

    Raises ParityError before timing anything when a peer's size differs from ours by more than 2 %.
    """
    size, timing = settings.size, settings.timing
    precisions = list(settings.precisions or supported_precisions())
    started_on = machine()  # the load and date when timing starts
    models = builders(size, settings.fused_qkv, settings.every_position)
    parameters = parameter_counts(models)
    check_parity(parameters)
    peak = PeakCeiling(timing.matmul_size)
    jit = resolve_jit(settings.jit_compile)
    dtypes = sorted({MATMUL_DTYPES[precision] for precision in precisions})
    for dtype in dtypes:
        peak(dtype, 0.0)
    # Every kernel library TensorFlow offers, each in its own process; a JAX run has only its own.
    libraries = library_peaks(dtypes, timing.matmul_size) if keras.backend.backend() == "tensorflow" else {}
    own = (
        f"this process (oneDNN {ONEDNN_STATES[started_on['onednn']]})"
        if libraries
        else f"this process ({keras.backend.backend()})"
    )
    best = best_peaks(
        {**{name: result["peaks"] for name, result in libraries.items()}, own: dict(peak.peaks)}
    )
    blocks = [
        precision_block(
            p, jit, models, size, timing, peak, {dtype: b["flops_per_s"] for dtype, b in best.items()}
        )
        for p in precisions
    ]
    started_on["xla"] = jit
    return {
        "machine": started_on,
        "backend": keras.backend.backend(),
        "size": asdict(size),
        "timing": asdict(timing),
        "fused_qkv": settings.fused_qkv,
        "parameters": parameters,
        "left_out": left_out_peers(),
        "peak_flops_per_s": peak.peaks,
        "library_peaks": libraries,
        "best_peak_flops_per_s": best,
        "blocks": blocks,
    }


def finish(results: dict) -> dict:
    """The load when timing ended, next to the load when it started."""
    results["machine"]["load_average_end"] = [round(value, 2) for value in os.getloadavg()]
    return results
