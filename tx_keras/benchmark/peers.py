"""The models `tx-bench` races: ours, the TensorFlow tutorial's build on `keras.layers.MultiHeadAttention`,
and KerasHub's `TransformerEncoder`/`TransformerDecoder`, all at the same `BenchSize`.

Each is a Keras model `(source_ids, target_ids) -> logits (B, T, vocab)`, post-LN, ReLU FFN, no dropout,
padding id 0 masked, so the three do the same work and differ only in how it is written.
"""

from __future__ import annotations

import importlib.util

import keras
from keras import layers

from tx_keras.benchmark.size import BenchSize
from tx_keras.layers.embedding import sinusoidal_positions
from tx_keras.models import Transformer


def ours(size: BenchSize, fused_qkv: bool = True, max_target_length: int | None = None) -> Transformer:
    """Our Transformer at `size` (`max_target_length` > length for decoding benchmarks)."""
    model = Transformer(
        source_vocab_size=size.vocab,
        target_vocab_size=size.vocab,
        max_source_length=size.length,
        max_target_length=max_target_length or size.length,
        num_encoder_layers=size.encoder_layers,
        num_decoder_layers=size.decoder_layers,
        d_model=size.d_model,
        num_heads=size.num_heads,
        dff=size.dff,
        fused_qkv=fused_qkv,
    )
    model.build(((None, size.length), (None, max_target_length or size.length)))
    return model


class _PositionalEmbedding(layers.Layer):
    """The tutorial's embedding: mask_zero tokens scaled by sqrt(d) plus the sinusoid table."""

    def __init__(self, vocab: int, d_model: int, length: int, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.embedding = layers.Embedding(vocab, d_model, mask_zero=True)
        self.table = sinusoidal_positions(length, d_model)

    def compute_mask(self, ids, mask=None):
        return self.embedding.compute_mask(ids, mask)

    def call(self, ids):
        length = keras.ops.shape(ids)[1]
        return self.embedding(ids) * self.d_model**0.5 + self.table[None, :length]


def _add_norm(inputs, sublayer_output):
    return layers.LayerNormalization()(layers.Add()([inputs, sublayer_output]))


def _feed_forward(inputs, size: BenchSize):
    hidden = layers.Dense(size.dff, activation="relu")(inputs)
    return _add_norm(inputs, layers.Dense(size.d_model)(hidden))


def keras_mha(size: BenchSize) -> keras.Model:
    """The TensorFlow Transformer tutorial's model: `keras.layers.MultiHeadAttention` blocks whose
    padding masks come from Keras mask propagation (`Embedding(mask_zero=True)`)."""
    source = keras.Input((size.length,), dtype="int32", name="source_ids")
    target = keras.Input((size.length,), dtype="int32", name="target_ids")
    key_dim = size.d_model // size.num_heads

    def attention(query, value, causal=False):
        attended = layers.MultiHeadAttention(size.num_heads, key_dim)(query, value, use_causal_mask=causal)
        return _add_norm(query, attended)

    memory = _PositionalEmbedding(size.vocab, size.d_model, size.length)(source)
    for _ in range(size.encoder_layers):
        memory = _feed_forward(attention(memory, memory), size)
    hidden = _PositionalEmbedding(size.vocab, size.d_model, size.length)(target)
    for _ in range(size.decoder_layers):
        hidden = attention(hidden, hidden, causal=True)
        hidden = _feed_forward(attention(hidden, memory), size)
    logits = layers.Dense(size.vocab)(hidden)
    return keras.Model((source, target), logits, name="keras_mha")


def keras_hub_installed() -> bool:
    return importlib.util.find_spec("keras_hub") is not None


def keras_hub(size: BenchSize) -> keras.Model:
    """KerasHub's encoder/decoder layers (install with the `bench` extra); padding masks passed explicitly."""
    import keras_hub

    source = keras.Input((size.length,), dtype="int32", name="source_ids")
    target = keras.Input((size.length,), dtype="int32", name="target_ids")
    source_mask, target_mask = keras.ops.not_equal(source, 0), keras.ops.not_equal(target, 0)

    def embed(ids):
        return keras_hub.layers.TokenAndPositionEmbedding(size.vocab, size.length, size.d_model)(ids)

    memory = embed(source)
    for _ in range(size.encoder_layers):
        memory = keras_hub.layers.TransformerEncoder(size.dff, size.num_heads)(
            memory, padding_mask=source_mask
        )
    hidden = embed(target)
    for _ in range(size.decoder_layers):
        hidden = keras_hub.layers.TransformerDecoder(size.dff, size.num_heads)(
            hidden, memory, decoder_padding_mask=target_mask, encoder_padding_mask=source_mask
        )
    logits = layers.Dense(size.vocab)(hidden)
    return keras.Model((source, target), logits, name="keras_hub")
