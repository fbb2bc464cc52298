"""Same weights, same numbers as before decoding went through the layers' own call.

tests/fixtures/decoding_reference.npz was written by the code of commit 7a389f7 (decoding through
`Decoder.step`, `project_key_value` and `attend`, one-hot position writes) for four tiny models with fixed
weights: fused attention; looped heads with pre-LN and learned positions; fused q/k/v with tied
embeddings and pre-LN; aligned attention (`attention=none`). It holds each model's weights by path, its
teacher-forced logits, the greedy and beam-search (width 3) translations and their cross-attention.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.models import Transformer

REFERENCE = np.load(Path(__file__).parent / "fixtures" / "decoding_reference.npz")
MODELS = ("fused", "looped_pre_learned", "fused_qkv_tied_pre", "aligned")
LENGTH = 6  # the models' max_target_length


def _model(name: str) -> Transformer:
    """The reference model rebuilt from its flat (pre-ModelConfig) config, its weights set by path."""
    model = Transformer.from_config(json.loads(str(REFERENCE[f"{name}:config"])))
    model((REFERENCE["source"][:, :2], REFERENCE["target"][:, :2]))
    weights = {variable.path.split("/", 1)[1]: variable for variable in model.weights}
    paths = [str(path) for path in REFERENCE[f"{name}:paths"]]
    assert list(weights) == paths  # the weight paths and order of before: old checkpoints load
    values, offset = REFERENCE[f"{name}:weights"], 0
    for path in paths:
        variable = weights[path]
        size = int(np.prod(variable.shape))
        variable.assign(values[offset : offset + size].reshape(variable.shape))
        offset += size
    assert offset == len(values)
    return model


@pytest.mark.parametrize("name", MODELS)
def test_same_weights_give_the_logits_and_translations_of_before(name):
    model = _model(name)
    source = tf.constant(REFERENCE["source"])
    logits = model((REFERENCE["source"], REFERENCE["target"]))
    np.testing.assert_allclose(logits, REFERENCE[f"{name}:logits"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(greedy_decoder(model, LENGTH)(source), REFERENCE[f"{name}:greedy"])
    ids, attention = cached_greedy_decoder(model, LENGTH, return_attention_scores=True)(source)
    np.testing.assert_array_equal(ids, REFERENCE[f"{name}:greedy"])
    np.testing.assert_allclose(attention, REFERENCE[f"{name}:cached_attention"], rtol=0, atol=1e-6)
    ids, attention = beam_search_decoder(model, LENGTH, width=3, alpha=0.6, return_attention_scores=True)(
        source
    )
    np.testing.assert_array_equal(ids, REFERENCE[f"{name}:beam"])
    np.testing.assert_allclose(attention, REFERENCE[f"{name}:beam_attention"], rtol=0, atol=1e-6)
