"""Text <-> ids inside the SavedModel for real-text runs: the training tokenizers, reused as is."""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.export.padded_rows import padded_with_eos
from tx_keras.special_tokens import EOS, PAD


class TextCodec(tf.Module):
    """WordCodec's interface (encode, source_tokens, decode, target_tokens) over the run's WordPiece or
    character vocabularies, so served text is normalised and tokenized exactly as in training and the
    output is detokenized with its original spacing. The graph uses tensorflow-text ops: a client must
    `import tensorflow_text` before loading the SavedModel (the manifest says so)."""

    requires_tensorflow_text = True

    def __init__(
        self,
        source_vocab_file: str | Path,
        target_vocab_file: str | Path,
        source_format: TextFormat,
        target_format: TextFormat,
        max_source_length: int,
    ):
        super().__init__(name="text_codec")
        self.max_source_length = max_source_length
        self.source = TextTokenizer(Vocabulary.from_file(source_vocab_file), source_format)
        self.target = TextTokenizer(Vocabulary.from_file(target_vocab_file), target_format)

    def encode(self, texts: tf.Tensor) -> tf.Tensor:
        """Cut to leave room for EOS, then EOS and padding, as training rows are."""
        ids = self.source.tokenize(texts)[:, : self.max_source_length - 1]
        return tf.cast(padded_with_eos(ids, EOS, PAD, self.max_source_length), tf.int32)

    def source_tokens(self, texts: tf.Tensor) -> tf.Tensor:
        return self.source.id_tokens(self.encode(texts))

    def decode(self, ids: tf.Tensor) -> tf.Tensor:
        return self.target.detokenize(ids)

    def target_tokens(self, ids: tf.Tensor) -> tf.Tensor:
        return self.target.id_tokens(ids)
