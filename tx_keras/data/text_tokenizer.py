"""Text <-> ids for real corpora, inside the TensorFlow graph: tf.data runs it in training, the
SavedModel runs it in serving, so both tokenize identically."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from tx_keras.data.detokenizer import Detokenizer
from tx_keras.data.text_format import SPACE, SUFFIX, TextFormat
from tx_keras.data.text_rule import INVISIBLE, WHITESPACE
from tx_keras.data.vocabulary import Vocabulary


def _character_class(characters: str) -> str:
    """An RE2 character class matching exactly `characters` (escaped: some are control characters)."""
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in characters) + "]"


class TextTokenizer(tf.Module):
    """WordPiece (tensorflow-text's FastWordpieceTokenizer) or character tokens over one Vocabulary.

    `normalize` mirrors `text_rule.clean_text` with TensorFlow ops: invalid UTF-8 -> U+FFFD, NFKC,
    invisible characters removed, whitespace runs -> one space, stripped, optional lower case. (It cannot
    refuse: text the rule refuses is kept from training by the reader and from a typed sentence by
    `text_rule.apply_text_rule`; a control character that reaches a SavedModel is an unknown token.)
    WordPiece splits words at whitespace only (see TextFormat). A typed special token ("<pad>", "<eos>")
    becomes UNK, never a control id.
    """

    def __init__(self, vocabulary: Vocabulary, text_format: TextFormat):
        super().__init__(name=f"{text_format.kind}_tokenizer")
        self.text_format = text_format
        tokens = vocabulary.tokens
        self.detokenizer = Detokenizer(tokens, text_format.kind)
        if text_format.kind == "wordpiece":
            self._wordpiece = tf_text.FastWordpieceTokenizer(
                tokens,
                suffix_indicator=SUFFIX,
                unknown_token=Vocabulary.SPECIALS[Vocabulary.UNK],
                no_pretokenization=True,  # we split at whitespace ourselves: keeps punctuation attached
                token_out_type=tf.int32,
            )
        else:
            self._ids = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(tokens, tf.range(len(tokens), dtype=tf.int32)),
                default_value=Vocabulary.UNK,
            )

    def normalize(self, texts: tf.Tensor) -> tf.Tensor:
        texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace")
        texts = tf_text.normalize_utf8(texts, "NFKC")
        texts = tf.strings.regex_replace(texts, _character_class(INVISIBLE), "")
        texts = tf.strings.strip(tf.strings.regex_replace(texts, _character_class(WHITESPACE) + "+", " "))
        return tf.strings.lower(texts, encoding="utf-8") if self.text_format.lowercase else texts

    def tokenize(self, texts: tf.Tensor) -> tf.RaggedTensor:
        """(B,) strings -> ragged (B, None) int32 ids, without SOS/EOS."""
        texts = self.normalize(texts)
        if self.text_format.kind == "wordpiece":
            ids = self._wordpiece.tokenize(tf.strings.split(texts)).merge_dims(1, 2)
        else:
            characters = tf.strings.unicode_split(texts, "UTF-8")
            spaces = tf.ragged.map_flat_values(tf.strings.regex_replace, characters, " ", SPACE)
            ids = tf.ragged.map_flat_values(self._ids.lookup, spaces)
            # A literal SPACE character in the text is the one character this vocabulary cannot spell (its
            # token stands for " "): UNK, or it would come back as a space.
            ids = tf.ragged.map_flat_values(
                lambda i, c: tf.where(c == SPACE, Vocabulary.UNK, i), ids, characters
            )
        return tf.ragged.map_flat_values(lambda i: tf.where(i <= Vocabulary.EOS, Vocabulary.UNK, i), ids)

    def id_tokens(self, ids: tf.Tensor) -> tf.Tensor:
        """Each id's token string (same shape); PAD -> ""."""
        return self.detokenizer.tokens(ids)

    def detokenize(self, ids: tf.Tensor) -> tf.Tensor:
        """(B, T) ids -> (B,) texts with their original spacing (detokenizer.py)."""
        return self.detokenizer(ids)
