"""Scores of decoded output against reference text."""

from tx_keras.evaluation.corpus_scores import corpus_scores

__all__ = ["corpus_scores"]
