"""Ids -> text, written once: the BLEU/chrF references and hypotheses of a run, the training samples and
the exported SavedModel's `decode` all go through this module, so the text a run is scored on is the text
its exported model serves.

Core TensorFlow ops only (no tensorflow-text), so a word-level SavedModel still runs in `saved_model_cli`.
Python callers pass a batch (`Detokenizer.texts`): one graph call for a test split instead of a loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from tx_keras.data.text_format import SPACE, SUFFIX
from tx_keras.special_tokens import EOS, PAD, SOS

# How tokens join back into text:
#   wordpiece: pieces of whitespace-separated words; "##" marks a piece that continues the previous one,
#              so joining with spaces and removing " ##" restores the original spacing ("l'homme");
#   characters: one token per character, "▁" standing for a space;
#   words: whole words joined with spaces, except that a word ending in an apostrophe (French elision,
#          `l'`) joins the next (the synthetic tasks' vocabularies).
JOINS = ("wordpiece", "characters", "words")


def _kept(ids: tf.Tensor) -> tf.Tensor:
    """(B, T) bool: the positions before each row's first EOS that hold neither PAD nor SOS."""
    before_eos = tf.equal(tf.cumsum(tf.cast(tf.equal(ids, EOS), tf.int32), axis=1), 0)
    return before_eos & tf.not_equal(ids, PAD) & tf.not_equal(ids, SOS)


def join_tokens(tokens: tf.Tensor, ids: tf.Tensor, join: str) -> tf.Tensor:
    """(B, T) token strings of (B, T) ids -> (B,) texts: the tokens before the first EOS, PAD and SOS
    dropped, joined by the `join` rule."""
    kept = tf.ragged.boolean_mask(tokens, _kept(ids))
    if join == "characters":
        return tf.strings.regex_replace(tf.strings.reduce_join(kept, axis=1), SPACE, " ")
    texts = tf.strings.reduce_join(kept, axis=1, separator=" ")
    if join == "wordpiece":
        return tf.strings.regex_replace(texts, f"^{SUFFIX}| {SUFFIX}", "")
    if join == "words":
        return tf.strings.regex_replace(texts, "' ", "'")
    raise ValueError(f"join={join!r}; choose one of: {', '.join(JOINS)}")


class Detokenizer(tf.Module):
    """One vocabulary's ids -> text by one join rule; a tf.Module so a SavedModel can carry it."""

    def __init__(self, tokens: Sequence[str], join: str, name: str = "detokenizer"):
        super().__init__(name=name)
        if join not in JOINS:
            raise ValueError(f"join={join!r}; choose one of: {', '.join(JOINS)}")
        self.join = join
        self._tokens = tf.constant(list(tokens))

    def tokens(self, ids: tf.Tensor) -> tf.Tensor:
        """Each id's token string (same shape); PAD -> ""."""
        ids = tf.cast(ids, tf.int32)
        return tf.where(tf.equal(ids, PAD), "", tf.gather(self._tokens, ids))

    def __call__(self, ids: tf.Tensor) -> tf.Tensor:
        """(B, T) ids -> (B,) UTF-8 texts, in the graph."""
        return self._texts(tf.cast(ids, tf.int32))

    # autograph=False: no Python control flow on tensors here; conversion is only start-up time.
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
    def _texts(self, ids: tf.Tensor) -> tf.Tensor:
        # One traced graph: called eagerly, the dozen ragged ops would cost ~20 ms a call instead of ~1.
        return join_tokens(tf.gather(self._tokens, ids), ids, self.join)

    def texts(self, rows: np.ndarray | Sequence[Sequence[int]]) -> list[str]:
        """(B, T) ids -> B Python strings (one eager call for the batch)."""
        rows = np.asarray(rows, dtype=np.int32)
        if rows.shape[0] == 0:
            return []
        return [text.decode("utf-8") for text in self(tf.constant(rows.reshape(rows.shape[0], -1))).numpy()]
