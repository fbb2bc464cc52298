"""The tiny models of tests/fixtures/decoding_reference.npz, rebuilt on whichever Keras backend imports this.

The file was written by the code of commit 7a389f7 on TensorFlow (see tests/test_decoding_reference.py): its
translations are what every backend's decoders must give for these weights. Imports no TensorFlow, so a
JAX-backend process without it can load them too.
"""

import json
from pathlib import Path

import numpy as np

from tx_keras.models import Transformer

REFERENCE = np.load(Path(__file__).parent / "fixtures" / "decoding_reference.npz")
MODELS = ("fused", "looped_pre_learned", "fused_qkv_tied_pre", "aligned")
LENGTH = 6  # the models' max_target_length


def reference_model(name: str) -> Transformer:
    """The reference model rebuilt from its flat (pre-ModelConfig) config, its weights set by path."""
    model = Transformer.from_config(json.loads(str(REFERENCE[f"{name}:config"])))
    model.build((REFERENCE["source"][:, :2].shape, REFERENCE["target"][:, :2].shape))
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
