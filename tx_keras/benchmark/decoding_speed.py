"""tx-bench's decoding calls, in the worker process that times them (decoding_process.py starts it as
tx-translate starts, with the allocator and TensorFlow settings tx-bench's process has, but a fresh heap):
the prefix (uncached) and cached greedy decoders, and the SavedModel's `translate`; decoding_turns.py makes
rates of their times.

Its thread pools are tx-translate's plan (decoding/row_parts.py) or, for the comparison, TensorFlow's
defaults: the pools are per process, chosen before its runtime starts.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.benchmark import peers
from tx_keras.benchmark.machine import onednn_enabled
from tx_keras.benchmark.settings import BenchSize
from tx_keras.benchmark.worker_process import Channel
from tx_keras.data import Vocabulary
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.export.run_export import SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE, ExportSettings, export_model
from tx_keras.export.saved_model_loader import load_saved_model
from tx_keras.models import Transformer
from tx_keras.runtime import allocator
from tx_keras.runtime.thread_pools import inter_op_threads, intra_op_threads
from tx_keras.special_tokens import EOS, SPECIALS


def decoding_model(size: BenchSize, max_output: int, fused_qkv: bool = False) -> Transformer:
    """Our model (with the shipped `fused_qkv`, as tx-bench passes it) with EOS made unreachable, so every
    sentence decodes the full `max_output` tokens (an untrained model would otherwise stop at a random
    step and the timings would measure luck)."""
    model = peers.ours(size, fused_qkv, max_target_length=max_output)
    bias = model.projection.bias
    bias.assign(tf.tensor_scatter_nd_update(bias, [[EOS]], [-1e4]))
    return model


def decoding_calls(
    size: BenchSize, outputs: list[int], fused_qkv: bool, saved_model: bool, folder: Path
) -> dict[str, Callable[[], None]]:
    """tx-bench's timed decoding calls, each traced and warmed up by one call here: `prefix_N` and
    `cached_N` (the uncached and cached greedy decoders on `size.batch` random sentences, N output tokens
    each) for every N in `outputs`, and with `saved_model` the exported SavedModel's `translate` (text in,
    text out, cached greedy decoding) at the longest, `saved_model_N`, exported into `folder`."""
    model = decoding_model(size, max(outputs), fused_qkv)
    source = tf.constant(
        np.random.default_rng(0).integers(4, size.vocab, (size.batch, size.length), dtype=np.int32)
    )
    calls: dict[str, Callable[[], None]] = {}
    for count in outputs:
        for name, decoder in (("prefix", greedy_decoder), ("cached", cached_greedy_decoder)):
            decode = decoder(model, count)
            calls[f"{name}_{count}"] = lambda decode=decode: decode(source).numpy()
    if saved_model:
        calls[f"saved_model_{max(outputs)}"] = _saved_model_call(model, size, folder)
    for call in calls.values():
        call()  # trace and warm up
    return calls


def _saved_model_call(model: Transformer, size: BenchSize, folder: Path) -> Callable[[], None]:
    """One call of the exported SavedModel's `translate` on `size.batch` sentences of random words."""
    words = [f"w{i}" for i in range(size.vocab - len(SPECIALS))]
    rng = np.random.default_rng(0)
    texts = tf.constant([" ".join(rng.choice(words, size.length - 1)) for _ in range(size.batch)])
    for name in (SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE):
        Vocabulary(words).to_file(folder / name)
    saved = export_model(model, folder, folder / "export", ExportSettings(beam_width=1))
    translate = load_saved_model(saved).signatures["translate"]
    return lambda: translate(texts=texts)["translation"].numpy()


def serve_calls(spec: dict, channel: Channel) -> None:
    """In the worker (worker_process.py; spec: size, outputs, fused_qkv, saved_model, planned_pools): plan
    the pools or not, trace and warm up the calls, answer their keys and this process's facts; then time
    one call per request line naming its key, answering `{"wall": s, "cpu": s}`, until stdin closes."""
    from tx_keras.decoding.row_parts import plan_decoding_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_decoding_threads()  # before TensorFlow's runtime starts, as tx-translate
    with tempfile.TemporaryDirectory() as folder:  # the SavedModel's, kept while it is called
        size = BenchSize(**spec["size"])
        calls = decoding_calls(size, spec["outputs"], spec["fused_qkv"], spec["saved_model"], Path(folder))
        process = {
            "pid": os.getpid(),
            "allocator": allocator.applied(),
            "onednn": onednn_enabled(),
            "planned_pools": spec["planned_pools"],
            "thread_pools": pools,
            "intra_op_threads": intra_op_threads(),
            "inter_op_threads": inter_op_threads(),
        }
        channel.answer({"calls": list(calls), "process": process})
        while (key := channel.request()) is not None:
            started, started_cpu = time.perf_counter(), time.process_time()
            calls[key]()
            channel.answer({"wall": time.perf_counter() - started, "cpu": time.process_time() - started_cpu})
