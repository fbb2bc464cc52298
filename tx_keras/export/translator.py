"""The exported module: a Transformer, its codec and its decoder behind string-in signatures."""

from __future__ import annotations

import tensorflow as tf

from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.export.export_config import ATTENTION_MODES
from tx_keras.export.text_codec import TextCodec
from tx_keras.export.word_codec import WordCodec
from tx_keras.models import Transformer

_TEXTS = tf.TensorSpec([None], tf.string, name="texts")


def _used_length(ids: tf.Tensor) -> tf.Tensor:
    """The longest row's length up to its last non-padding id (0 for an empty batch)."""
    positions = tf.range(1, tf.shape(ids)[1] + 1)[None, :]
    lengths = tf.reduce_max(tf.where(tf.not_equal(ids, 0), positions, 0), axis=1)
    return tf.reduce_max(tf.concat([[0], lengths], axis=0))


class Translator(tf.Module):
    """What the SavedModel serves (each method is one signature):

    `translate(texts)` -> {"translation"}; `translate_with_attention(texts)` -> {"translation",
    "output_ids" (B, T), "output_tokens" (B, T), "source_tokens" (B, Ts), "cross_attention"
    (B, layers, T, Ts) averaged over heads, or (B, layers, heads, T, Ts) with attention="heads"}, trimmed
    to the longest sentence in the batch (through EOS); `logits(source_ids, decoder_input_ids)` ->
    {"logits"}, the Keras model's teacher-forced output for evaluation; `tokenize(texts)` ->
    {"source_ids"}, the ids `logits` expects.

    Decoding is the cached greedy decoder for beam_width 1, else beam search with GNMT's length penalty.
    """

    def __init__(
        self,
        model: Transformer,
        codec: WordCodec | TextCodec,
        beam_width: int = 1,
        length_penalty: float = 0.6,
        attention: str = "mean",
    ):
        super().__init__(name="translator")
        if attention not in ATTENTION_MODES:
            raise ValueError(f"attention={attention!r}; choose one of: {', '.join(ATTENTION_MODES)}")
        self.codec, self.attention = codec, attention
        # The weights are tracked as a plain list of their tf.Variables, as keras.export does, and the
        # Keras model itself is not (only closures see it): TF1-style loaders (`saved_model_cli run`,
        # TF Serving) cannot restore variables reached through Keras' variable wrappers.
        self.model_variables = [getattr(variable, "value", variable) for variable in model.variables]
        self._forward = lambda source_ids, decoder_input_ids: model(
            (source_ids, decoder_input_ids), training=False
        )
        length = model.max_target_length
        if beam_width == 1:
            self._decode = cached_greedy_decoder(model, length)
            self._decode_with_attention = cached_greedy_decoder(model, length, return_attention_scores=True)
        else:
            self._decode = beam_search_decoder(model, length, beam_width, length_penalty)
            self._decode_with_attention = beam_search_decoder(
                model, length, beam_width, length_penalty, return_attention_scores=True
            )

    # autograph=False on every signature: no Python control flow on tensors (the decoders loop with
    # keras.ops.while_loop, a tf.while_loop here); converting the model's code for each of them made an
    # export ~2 s slower.
    @tf.function(input_signature=[_TEXTS], autograph=False)
    def translate(self, texts: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"translation": self.codec.decode(self._decode(self.codec.encode(texts)))}

    @tf.function(input_signature=[_TEXTS], autograph=False)
    def translate_with_attention(self, texts: tf.Tensor) -> dict[str, tf.Tensor]:
        source_ids = self.codec.encode(texts)
        ids, attention = self._decode_with_attention(source_ids)
        output_length, source_length = _used_length(ids), _used_length(source_ids)
        ids = ids[:, :output_length]
        attention = attention[:, :, :, :output_length, :source_length]
        if self.attention == "mean":
            attention = tf.reduce_mean(attention, axis=2)
        return {
            "translation": self.codec.decode(ids),
            "output_ids": ids,
            "output_tokens": self.codec.target_tokens(ids),
            "source_tokens": self.codec.source_tokens(texts)[:, :source_length],
            "cross_attention": attention,
        }

    @tf.function(
        autograph=False,
        input_signature=[
            tf.TensorSpec([None, None], tf.int32, name="source_ids"),
            tf.TensorSpec([None, None], tf.int32, name="decoder_input_ids"),
        ],
    )
    def logits(self, source_ids: tf.Tensor, decoder_input_ids: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"logits": self._forward(source_ids, decoder_input_ids)}

    @tf.function(input_signature=[_TEXTS], autograph=False)
    def tokenize(self, texts: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"source_ids": self.codec.encode(texts)}

    def signatures(self) -> dict:
        """The signature map for `tf.saved_model.save`; serving_default is `translate`."""
        return {
            "serving_default": self.translate,
            "translate": self.translate,
            "translate_with_attention": self.translate_with_attention,
            "logits": self.logits,
            "tokenize": self.tokenize,
        }
