"""The models `tx-bench` races: ours, the TensorFlow tutorial's build on `keras.layers.MultiHeadAttention`,
and KerasHub's `TransformerEncoder`/`TransformerDecoder`, all at the same `BenchSize`.

Each is a Keras model `(source_ids, target_ids) -> float32 logits (B, T, vocab)`, post-LN, ReLU FFN, no
dropout, padding id 0 masked, so the three do the same work and differ only in how it is written. They
also hold the same weights: token embeddings scaled by sqrt(d_model) plus the fixed sinusoid table (no
position weights), biased projections, a biased vocabulary projection computed in the compute dtype and
cast to float32 (ours casts its logits the same way), so their parameter counts match exactly.
"""

from __future__ import annotations

import importlib.util

import keras
from keras import layers

from tx_keras.benchmark.settings import BenchSize
from tx_keras.layers.sinusoidal_positions import sinusoidal_positions
from tx_keras.models import ModelConfig, Transformer


class EveryPosition(Transformer):
    """Ours with the gather of real positions off: its training step computes the FFN sublayers, the
    vocabulary projection and the loss at every position, padding included, as the peers do."""

    def compile(self, *args, **kwargs):
        super().compile(*args, **kwargs)
        self.objective_ignores_padding = False  # what can_gather reads: no gathered step


def ours(
    size: BenchSize,
    fused_qkv: bool = False,
    max_target_length: int | None = None,
    every_position: bool = False,
) -> Transformer:
    """Our Transformer at `size` (`max_target_length` > length for decoding benchmarks). With
    `every_position` it trains on every position, padding included, as the peers do: beside ours, what
    skipping padding is worth, and ours against the peers at equal work."""
    config = ModelConfig(
        num_encoder_layers=size.encoder_layers,
        num_decoder_layers=size.decoder_layers,
        d_model=size.d_model,
        num_heads=size.num_heads,
        dff=size.dff,
        fused_qkv=fused_qkv,
    )
    model = (EveryPosition if every_position else Transformer)(
        config,
        source_vocab_size=size.vocab,
        target_vocab_size=size.vocab,
        max_source_length=size.length,
        max_target_length=max_target_length or size.length,
    )
    model.build(((None, size.length), (None, max_target_length or size.length)))
    return model


class _PositionalEmbedding(layers.Layer):
    """The tutorial's embedding: tokens scaled by sqrt(d) plus the sinusoid table; with `mask_zero` it
    emits the padding mask Keras propagates (the tutorial's way), without it the caller passes masks."""

    def __init__(self, vocab: int, d_model: int, length: int, mask_zero: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.d_model = d_model
        self.embedding = layers.Embedding(vocab, d_model, mask_zero=mask_zero)
        self.table = sinusoidal_positions(length, d_model)

    def compute_mask(self, ids, mask=None):
        return self.embedding.compute_mask(ids, mask)

    def call(self, ids):
        length = keras.ops.shape(ids)[1]
        embedded = self.embedding(ids)
        scale = keras.ops.cast(self.d_model**0.5, embedded.dtype)
        return embedded * scale + keras.ops.cast(self.table[None, :length], embedded.dtype)


def _add_norm(inputs, sublayer_output):
    return layers.LayerNormalization()(layers.Add()([inputs, sublayer_output]))


def _feed_forward(inputs, size: BenchSize):
    hidden = layers.Dense(size.dff, activation="relu")(inputs)
    return _add_norm(inputs, layers.Dense(size.d_model)(hidden))


def _logits(hidden, size: BenchSize):
    """The vocabulary projection in the compute dtype, then float32 for the softmax and loss (as ours)."""
    return layers.Activation("linear", dtype="float32")(layers.Dense(size.vocab)(hidden))


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
    return keras.Model((source, target), _logits(hidden, size), name="keras_mha")


def keras_hub_installed() -> bool:
    return importlib.util.find_spec("keras_hub") is not None


def keras_hub(size: BenchSize) -> keras.Model:
    """KerasHub's encoder/decoder layers (install with the `bench` extra); padding masks passed explicitly.

    The embedding is the tutorial's (sinusoid, no position weights), not KerasHub's
    `TokenAndPositionEmbedding`, whose learned position table would give this peer weights ours lacks.
    """
    import keras_hub

    source = keras.Input((size.length,), dtype="int32", name="source_ids")
    target = keras.Input((size.length,), dtype="int32", name="target_ids")
    source_mask, target_mask = keras.ops.not_equal(source, 0), keras.ops.not_equal(target, 0)

    def embed(ids):
        return _PositionalEmbedding(size.vocab, size.d_model, size.length, mask_zero=False)(ids)

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
    return keras.Model((source, target), _logits(hidden, size), name="keras_hub")
