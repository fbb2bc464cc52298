"""The models the lecture's blocks form: encoder, decoder, and the seq2seq Transformer.

The classes load on first use (PEP 562), so `tx_keras.models.model_config` and `components` import without
Keras: the config tree registers ModelConfig before TensorFlow starts, and the layers can resolve their
components without importing the models that use them.
"""

from __future__ import annotations

from tx_keras.lazy_names import lazy_names

__getattr__, __all__ = lazy_names(
    __name__,
    decoder=("Decoder", "DecoderBlock"),
    encoder=("Encoder", "EncoderBlock"),
    model_config=("ModelConfig",),
    transformer=("Transformer",),
)
