"""The decoders on the JAX backend: the same weights decode the same words as on TensorFlow.

The weights are those of tests/fixtures/decoding_reference.npz, whose translations and cross-attention
TensorFlow's decoders wrote and still give (tests/test_decoding_reference.py, which also checks that no
greedy choice in it is a near-tie). A subprocess with KERAS_BACKEND=jax, in which importing TensorFlow
fails as on a machine without it, decodes them again.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.float_tolerance import FLOAT32
from tests.reference_models import MODELS, REFERENCE
from tx_keras.decoding.compiled_decoder import size_class
from tx_keras.special_tokens import EOS

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import json
import sys

sys.modules["tensorflow"] = None  # as on a machine without TensorFlow: importing it fails

import numpy as np

from tests.reference_models import LENGTH, REFERENCE, reference_model
from tx_keras.decoding.compiled_decoder import decode_in_batches
from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.special_tokens import EOS

names, uncached, folder = json.loads(sys.argv[1]), sys.argv[2] == "uncached", sys.argv[3]
source = REFERENCE["source"]
for name in names:
    model = reference_model(name)
    out = {}
    if uncached:
        out["greedy"] = greedy_decoder(model, LENGTH)(source)
    cached = cached_greedy_decoder(model, LENGTH, return_attention_scores=True)
    out["cached"], out["cached_attention"] = cached(source)
    out["beam"], out["beam_attention"] = beam_search_decoder(
        model, LENGTH, width=3, alpha=0.6, return_attention_scores=True
    )(source)
    # batches of 2 and 1 rows, padded to one compiled shape
    out["cached_in_batches"] = decode_in_batches(lambda ids: cached(ids)[0], source, batch_size=2)
    # the weights are read at each call: an EOS made certain ends every sentence at once
    bias = model.logits_bias if model.projection is None else model.projection.bias
    bias.assign(np.where(np.arange(bias.shape[0]) == EOS, 100.0, 0.0).astype("float32"))
    out["eos_certain"] = cached(source)[0]
    np.savez(f"{folder}/{name}.npz", **out)
"""


def _decode_on_jax(names: tuple[str, ...], uncached: bool, folder: Path) -> dict[str, dict]:
    # XLA's CPU backend without LLVM's optimisation passes: the same programs, compiled in half the time
    # (~20 s against ~35 s for this test on the loaded 2-core CPU; JAX compiles every eager op too).
    env = {
        **os.environ,
        "KERAS_BACKEND": "jax",
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_backend_optimization_level=0",
        "PYTHONPATH": str(ROOT),
    }
    arguments = [json.dumps(names), "uncached" if uncached else "cached", str(folder)]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *arguments], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: dict(np.load(folder / f"{name}.npz")) for name in names}


def _assert_decodes_as_tensorflow(name: str, decoded: dict, uncached: bool) -> None:
    greedy, beam = REFERENCE[f"{name}:greedy"], REFERENCE[f"{name}:beam"]
    if uncached:
        np.testing.assert_array_equal(decoded["greedy"], greedy)
    np.testing.assert_array_equal(decoded["cached"], greedy)
    np.testing.assert_array_equal(decoded["cached_in_batches"], greedy)
    np.testing.assert_allclose(decoded["cached_attention"], REFERENCE[f"{name}:cached_attention"], **FLOAT32)
    np.testing.assert_array_equal(decoded["beam"], beam)
    np.testing.assert_allclose(decoded["beam_attention"], REFERENCE[f"{name}:beam_attention"], **FLOAT32)
    eos_first = np.zeros_like(greedy)
    eos_first[:, 0] = EOS
    np.testing.assert_array_equal(decoded["eos_certain"], eos_first)


@pytest.mark.slow  # a JAX process: ~15 s
def test_jax_decodes_the_tensorflow_words(tmp_path):
    """One model (tied embeddings, pre-LN, a beam that differs from greedy decoding), the two decoders
    evaluation and export use."""
    decoded = _decode_on_jax(("fused_qkv_tied_pre",), False, tmp_path)
    _assert_decodes_as_tensorflow("fused_qkv_tied_pre", decoded["fused_qkv_tied_pre"], uncached=False)


@pytest.mark.slow
def test_jax_decodes_the_tensorflow_words_for_every_model_and_decoder(tmp_path):
    decoded = _decode_on_jax(MODELS, True, tmp_path)
    for name in MODELS:
        _assert_decodes_as_tensorflow(name, decoded[name], uncached=True)


def test_jax_batch_shapes_fall_into_few_size_classes():
    sizes = (0, 1, 8, 9, 16, 17, 300, 512, 513)
    assert [size_class(n) for n in sizes] == [8, 8, 8, 16, 16, 32, 512, 512, 1024]
