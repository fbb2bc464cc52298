"""Scores of decoded output against reference text, and the translations they score."""

from tx_keras.evaluation.corpus_scores import corpus_scores
from tx_keras.evaluation.translation_file import write_translations

__all__ = ["corpus_scores", "write_translations"]
