"""tx-bench's decoding calls, in the process that times them (cli/decoding_worker.py): the prefix (uncached)
and cached greedy decoders, and the SavedModel's `translate`; decoding_turns.py makes rates of their times."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.benchmark import peers
from tx_keras.benchmark.size import BenchSize
from tx_keras.data import Vocabulary
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.export.run_export import SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE, ExportSettings, export_model
from tx_keras.export.saved_model_loader import load_saved_model
from tx_keras.models import Transformer
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
