"""Everything `tx-bench` measures in one run, returned as one JSON-ready dict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import keras

from tx_keras.benchmark import peers
from tx_keras.benchmark.decoding_speed import decoding_model, decoding_rates, saved_model_rate
from tx_keras.benchmark.flops import matmul_peak, training_flops
from tx_keras.benchmark.size import BenchSize
from tx_keras.benchmark.throughput import training_throughput
from tx_keras.training.precision import resolve_precision


@dataclass(frozen=True)
class Settings:
    """Our model's speed switches: `trainer.precision`, `trainer.jit_compile`, `model.fused_qkv`."""

    precision: str = "auto"
    jit_compile: bool | str = "auto"
    fused_qkv: bool = False

    @property
    def label(self) -> str:
        parts = [resolve_precision(self.precision)]
        if self.jit_compile is True:
            parts.append("xla")
        if self.fused_qkv:
            parts.append("fused_qkv")
        return " + ".join(parts)


# Each switch on its own, from the plain float32 path.
SWITCHES = (
    Settings("float32", False, False),
    Settings("float32", False, True),
    Settings("float32", True, False),
    Settings("mixed_bfloat16", False, False),
    Settings("mixed_bfloat16", True, False),
)


@dataclass(frozen=True)
class Timing:
    """How long to measure: training windows x steps after a warm-up; decoding repeats; peak matmul n."""

    windows: int = 5
    steps: int = 10
    warmup: int = 3
    repeats: int = 3
    matmul_size: int = 2048
    outputs: tuple[int, ...] = (32, 64)


def _training_row(build: Callable[[], keras.Model], size: BenchSize, peak: float, timing: Timing, **kw):
    tokens = training_throughput(
        build, size, windows=timing.windows, steps=timing.steps, warmup=timing.warmup, **kw
    )
    flops = training_flops(size) * tokens / size.tokens_per_step
    return {"tokens_per_s": tokens, "flops_per_s": flops, "mfu": flops / peak}


def run_benchmark(size: BenchSize, defaults: Settings, timing: Timing, saved_model: bool = True) -> dict:
    """Peak matmul, training throughput (ours at its defaults, each switch, the peers), decoding speed."""
    peak = {"float32": matmul_peak("float32", timing.matmul_size)}
    if resolve_precision("mixed_bfloat16") == "mixed_bfloat16":
        peak["bfloat16"] = matmul_peak("bfloat16", timing.matmul_size)

    def ours(settings: Settings) -> dict:
        return _training_row(
            lambda: peers.ours(size, settings.fused_qkv),
            size,
            peak["float32"],
            timing,
            precision=settings.precision,
            jit_compile=settings.jit_compile,
        )

    training = {"ours": {"settings": defaults.label, **ours(defaults)}}
    training["keras_mha"] = _training_row(lambda: peers.keras_mha(size), size, peak["float32"], timing)
    training["keras_hub"] = (
        _training_row(lambda: peers.keras_hub(size), size, peak["float32"], timing)
        if peers.keras_hub_installed()
        else None
    )
    switches = {settings.label: ours(settings) for settings in SWITCHES}
    ratios = {}
    for peer in ("keras_mha", "keras_hub"):
        if training[peer] is not None:
            ratios[f"ours/{peer}"] = training["ours"]["tokens_per_s"] / training[peer]["tokens_per_s"]
            ratios[f"ours float32/{peer}"] = (
                switches["float32"]["tokens_per_s"] / training[peer]["tokens_per_s"]
            )
    keras.backend.clear_session()
    decoding: dict = {}
    model = decoding_model(size, max(timing.outputs))
    for outputs in timing.outputs:
        rates = decoding_rates(model, size, outputs, timing.repeats)
        decoding[str(outputs)] = {**rates, "speedup": rates["cached"] / rates["uncached"]}
    if saved_model:
        decoding[f"saved_model_{max(timing.outputs)}"] = saved_model_rate(model, size, timing.repeats)
    return {
        "size": asdict(size),
        "defaults": asdict(defaults),
        "peak_flops_per_s": peak,
        "training": training,
        "switches": switches,
        "ratios": ratios,
        "decoding": decoding,
    }
