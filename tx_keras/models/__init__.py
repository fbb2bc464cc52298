"""The models the lecture's blocks form: encoder, decoder, and the seq2seq Transformer.

The classes load on first use (PEP 562), so `tx_keras.models.model_config` and `components` import without
Keras: the config tree registers ModelConfig before TensorFlow starts, and the layers can resolve their
components without importing the models that use them.
"""

from __future__ import annotations

from tx_keras.lazy_names import lazy_names

_HOMES = {
    "Decoder": "tx_keras.models.decoder",
    "DecoderBlock": "tx_keras.models.decoder",
    "Encoder": "tx_keras.models.encoder",
    "EncoderBlock": "tx_keras.models.encoder",
    "ModelConfig": "tx_keras.models.model_config",
    "Transformer": "tx_keras.models.transformer",
}

__all__ = sorted(_HOMES)

__getattr__ = lazy_names(__name__, _HOMES)
