"""Ids -> text in plain Python, for a run without TensorFlow: the same rules as detokenizer.py's graph
(tokens before the first EOS, PAD and SOS dropped, joined by the vocabulary's join rule), so a JAX run on
a machine without TensorFlow scores and shows the texts a TensorFlow run would."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from tx_keras.data.text_format import SPACE, SUFFIX
from tx_keras.runtime.tensorflow_presence import tensorflow_installed
from tx_keras.special_tokens import EOS, PAD, SOS

JOINS = ("wordpiece", "characters", "words")  # detokenizer.JOINS, without importing TensorFlow


class PlainDetokenizer:
    """One vocabulary's ids -> text by one join rule (`Detokenizer.texts` without TensorFlow)."""

    def __init__(self, tokens: Sequence[str], join: str):
        if join not in JOINS:
            raise ValueError(f"join={join!r}; choose one of: {', '.join(JOINS)}")
        self.join = join
        self._tokens = list(tokens)

    def _text(self, row: np.ndarray) -> str:
        kept = []
        for token_id in row.tolist():
            if token_id == EOS:
                break
            if token_id not in (PAD, SOS):
                kept.append(self._tokens[token_id])
        if self.join == "characters":
            return "".join(kept).replace(SPACE, " ")
        text = " ".join(kept)
        if self.join == "wordpiece":
            return re.sub(f"^{re.escape(SUFFIX)}| {re.escape(SUFFIX)}", "", text)
        return text.replace("' ", "'")

    def texts(self, rows: np.ndarray | Sequence[Sequence[int]]) -> list[str]:
        """(B, T) ids -> B Python strings."""
        rows = np.asarray(rows, dtype=np.int32)
        return [self._text(row) for row in rows.reshape(rows.shape[0], -1)] if rows.shape[0] else []


def detokenizer(tokens: Sequence[str], join: str):
    """detokenizer.Detokenizer (a tf.Module a SavedModel carries) where TensorFlow is installed, else the
    plain one."""
    if tensorflow_installed():
        from tx_keras.data.detokenizer import Detokenizer

        return Detokenizer(tokens, join)
    return PlainDetokenizer(tokens, join)
