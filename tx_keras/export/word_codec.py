"""Text <-> ids inside the TensorFlow graph, for word-level vocabularies, with core ops only."""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from tx_keras.data.detokenizer import Detokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.export.padded_rows import padded_with_eos
from tx_keras.special_tokens import EOS, PAD, SPECIALS, UNK


class WordCodec(tf.Module):
    """The tokenizer and detokenizer a SavedModel carries, so a client sends text and gets text back.

    The interface every codec of a SavedModel offers (a later WordPiece codec, built on tensorflow-text,
    offers the same and sets `requires_tensorflow_text`):
      `encode(texts [B]) -> ids (B, max_source_length) int32`: tokens, EOS, padding, as in training;
      `source_tokens(texts) -> (B, max_source_length) strings`: what each source position holds, "" = pad;
      `decode(ids (B, T)) -> texts [B]`: words up to the first EOS, detokenized;
      `target_tokens(ids) -> (B, T) strings`: each output position's token, "" = pad.

    Word level: lower-case (UTF-8 aware), split on whitespace, unknown words (and typed special tokens)
    -> UNK, at most `max_source_length - 1` words then EOS. Invalid UTF-8 bytes become U+FFFD instead of
    failing. Decoding is the run's own detokenizer (data/detokenizer.py, the `words` join: spaces, and a
    word ending in an apostrophe glues to the next, `l' afrique` -> `l'afrique`), so served text is the
    text the run was scored on. Only core TensorFlow ops are used, so `saved_model_cli run` works without
    tensorflow-text. The source vocabulary file becomes a SavedModel asset; the target words are
    constants of the graph.
    """

    requires_tensorflow_text = False

    def __init__(self, source_vocab_file: str | Path, target_vocab_file: str | Path, max_source_length: int):
        super().__init__(name="word_codec")
        Vocabulary.from_file(source_vocab_file)  # refuses a file whose specials are not where ids expect them
        target_words = Vocabulary.from_file(target_vocab_file).tokens
        self.max_source_length = max_source_length
        line = tf.lookup.TextFileIndex
        self._source_ids = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                str(source_vocab_file), tf.string, line.WHOLE_LINE, tf.int64, line.LINE_NUMBER
            ),
            default_value=UNK,
        )
        self._detokenizer = Detokenizer(target_words, "words")

    def _words(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """(B,) strings -> ragged (B, None) lower-cased words, cut to leave room for EOS."""
        texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace")
        words = tf.strings.split(tf.strings.lower(texts, encoding="utf-8"))
        return words[:, : self.max_source_length - 1]

    def encode(self, texts: tf.Tensor) -> tf.Tensor:
        words = self._words(texts)
        ids = tf.cast(tf.ragged.map_flat_values(self._source_ids.lookup, words), tf.int32)
        # A typed "<pad>", "<sos>" or "<eos>" is an unknown word, not a control token.
        ids = tf.ragged.map_flat_values(lambda i: tf.where(i <= EOS, UNK, i), ids)
        return padded_with_eos(ids, EOS, PAD, self.max_source_length)

    def source_tokens(self, texts: tf.Tensor) -> tf.Tensor:
        return padded_with_eos(self._words(texts), SPECIALS[EOS], "", self.max_source_length)

    def target_tokens(self, ids: tf.Tensor) -> tf.Tensor:
        return self._detokenizer.tokens(ids)

    def decode(self, ids: tf.Tensor) -> tf.Tensor:
        return self._detokenizer(ids)
