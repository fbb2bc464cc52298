"""The models the lecture's blocks form: encoder, decoder, and the seq2seq Transformer.

The classes load on first use (PEP 562), so `tx_keras.models.model_config` and `components` import without
Keras: the config tree registers ModelConfig before TensorFlow starts, and the layers can resolve their
components without importing the models that use them.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "Decoder": "tx_keras.models.decoder",
    "DecoderBlock": "tx_keras.models.decoder",
    "Encoder": "tx_keras.models.encoder",
    "EncoderBlock": "tx_keras.models.encoder",
    "ModelConfig": "tx_keras.models.model_config",
    "Transformer": "tx_keras.models.transformer",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
