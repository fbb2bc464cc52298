"""The share of sentences translated exactly: the synthetic tasks' headline and the runs' objective."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tx_keras.data import Vocabulary


def exact_match(predicted: np.ndarray, target_ids: np.ndarray, vocab: Vocabulary) -> float:
    """Share of sentences whose decoded words, up to EOS, equal the reference's exactly."""
    references = [vocab.decode(row) for row in target_ids]
    hits = sum(vocab.decode(row) == reference for row, reference in zip(predicted, references, strict=True))
    return hits / max(len(references), 1)
