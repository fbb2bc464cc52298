"""How sure the model is of each token it writes (or is fed, teacher-forced): the token's probability,
the entropy of the whole next-token distribution and the alternatives it weighed (as inseq and LIT show
beside their attributions). A confident wrong word and an unsure right one look alike in attention."""

from __future__ import annotations

import numpy as np

TOP = 5  # alternatives listed per token


def confidence(logits: np.ndarray, target_ids: np.ndarray, tokens: list[str]) -> list[dict]:
    """Per position of (T, V) float logits and (T,) labels: {"token", "probability", "log_probability",
    "entropy" (nats), "top": [[token, probability], ...] (the TOP most likely, best first)}."""
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    probabilities = np.exp(log_probabilities)
    entropy = -(probabilities * log_probabilities).sum(axis=-1)
    rows = []
    for position, label in enumerate(np.asarray(target_ids)):
        best = np.argsort(-probabilities[position])[:TOP]
        rows.append(
            {
                "token": tokens[int(label)],
                "probability": round(float(probabilities[position, label]), 6),
                "log_probability": round(float(log_probabilities[position, label]), 6),
                "entropy": round(float(entropy[position]), 6),
                "top": [[tokens[int(i)], round(float(probabilities[position, i]), 6)] for i in best],
            }
        )
    return rows
