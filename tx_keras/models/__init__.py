"""The models the lecture's blocks form: encoder, decoder, and the seq2seq Transformer."""

from tx_keras.models.decoder import Decoder, DecoderBlock
from tx_keras.models.encoder import Encoder, EncoderBlock
from tx_keras.models.transformer import Transformer

__all__ = ["Decoder", "DecoderBlock", "Encoder", "EncoderBlock", "Transformer"]
