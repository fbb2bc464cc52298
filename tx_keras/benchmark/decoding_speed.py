"""Greedy decoding speed: output tokens/s, prefix (uncached) vs cached, in Python and as a SavedModel."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.benchmark import peers
from tx_keras.benchmark.ratio_interval import ratio_interval
from tx_keras.benchmark.size import BenchSize
from tx_keras.data import Vocabulary
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.export.run_export import SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE, ExportSettings, export_model
from tx_keras.export.saved_model_loader import load_saved_model
from tx_keras.models import Transformer
from tx_keras.special_tokens import EOS, SPECIALS


def _median_rate(decode: Callable[[], object], tokens: int, repeats: int) -> float:
    decode()  # trace and warm up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        decode()
        times.append(time.perf_counter() - started)
    return tokens / statistics.median(times)


def decoding_model(size: BenchSize, max_output: int, fused_qkv: bool = False) -> Transformer:
    """Our model (with the shipped `fused_qkv`, as tx-bench passes it) with EOS made unreachable, so every
    sentence decodes the full `max_output` tokens (an untrained model would otherwise stop at a random
    step and the timings would measure luck)."""
    model = peers.ours(size, fused_qkv, max_target_length=max_output)
    bias = model.projection.bias
    bias.assign(tf.tensor_scatter_nd_update(bias, [[EOS]], [-1e4]))
    return model


def decoding_rates(model: Transformer, size: BenchSize, outputs: int, repeats: int) -> dict[str, float]:
    """Tokens/s of the prefix (uncached) and cached greedy decoders for `outputs` tokens per sentence,
    timed in turns (prefix, cached, cached, prefix, ...) so a load change hits both; the median of
    `repeats` calls each, and `speedup` the median of the per-turn ratios. `cpu_speedup` is the same
    ratio in this process's CPU time: on a shared machine a wall-time turn also holds the time the
    decoder waited for a core (a cached call, made of many small ops that hop between TensorFlow's
    threads, waits more often than a prefix call), which the CPU time leaves out. With two turns or more,
    `interval` and `cpu_interval` give the ratio as the geometric mean over the turns with its 95 %
    interval (ratio_interval.py, as for the training rows): a median of three turns says nothing about
    where the next run may land."""
    source = tf.constant(
        np.random.default_rng(0).integers(4, size.vocab, (size.batch, size.length), dtype=np.int32)
    )
    tokens = size.batch * outputs
    decoders = {
        "prefix": greedy_decoder(model, outputs),
        "cached": cached_greedy_decoder(model, outputs),
    }
    for decode in decoders.values():
        decode(source).numpy()  # trace and warm up
    times: dict[str, list[float]] = {name: [] for name in decoders}
    cpu: dict[str, list[float]] = {name: [] for name in decoders}
    for turn in range(repeats):
        for name in decoders if turn % 2 == 0 else reversed(decoders):
            started, started_cpu = time.perf_counter(), time.process_time()
            decoders[name](source).numpy()
            times[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    rates = {name: tokens / statistics.median(seconds) for name, seconds in times.items()}
    rates |= {"speedup": _median_ratio(times), "cpu_speedup": _median_ratio(cpu)}
    if repeats >= 2:
        rates["interval"] = ratio_interval(times["cached"], times["prefix"])
        rates["cpu_interval"] = ratio_interval(cpu["cached"], cpu["prefix"])
    return rates


def _median_ratio(seconds: dict[str, list[float]]) -> float:
    """The median over turns of prefix time / cached time."""
    return statistics.median(
        slow / max(fast, 1e-9) for slow, fast in zip(seconds["prefix"], seconds["cached"], strict=True)
    )


def decoding_results(
    size: BenchSize, outputs: list[int], repeats: int, fused_qkv: bool, saved_model: bool
) -> dict:
    """tx-bench's decoding rows: `decoding_rates` at each output length in `outputs`, keyed by it, and with
    `saved_model` the exported SavedModel's rate at the longest (`saved_model_N`)."""
    model = decoding_model(size, max(outputs), fused_qkv)
    results: dict = {str(count): decoding_rates(model, size, count, repeats) for count in outputs}
    if saved_model:
        results[f"saved_model_{max(outputs)}"] = saved_model_rate(model, size, repeats)
    return results


def saved_model_rate(model: Transformer, size: BenchSize, repeats: int) -> float:
    """Tokens/s of the exported SavedModel's `translate` (text in, text out, cached greedy decoding)."""
    words = [f"w{i}" for i in range(size.vocab - len(SPECIALS))]
    rng = np.random.default_rng(0)
    texts = tf.constant([" ".join(rng.choice(words, size.length - 1)) for _ in range(size.batch)])
    with tempfile.TemporaryDirectory() as folder:
        for name in (SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE):
            Vocabulary(words).to_file(Path(folder) / name)
        saved = export_model(model, Path(folder), Path(folder) / "export", ExportSettings(beam_width=1))
        translate = load_saved_model(saved).signatures["translate"]
        return _median_rate(
            lambda: translate(texts=texts)["translation"].numpy(),
            size.batch * model.max_target_length,
            repeats,
        )
