"""The end-of-run evaluation: scores of decoded output against reference text, the translations they
score, length-sorted decoding and the validation choice of the beam's length penalty."""

from tx_keras.evaluation.corpus_scores import corpus_scores
from tx_keras.evaluation.length_penalty_choice import AUTO, LengthPenaltyChoice, choose_length_penalty
from tx_keras.evaluation.run_evaluation import RunEvaluation, evaluate_run, write_translations
from tx_keras.evaluation.sorted_decoding import decode_sorted

__all__ = [
    "AUTO",
    "LengthPenaltyChoice",
    "RunEvaluation",
    "choose_length_penalty",
    "corpus_scores",
    "decode_sorted",
    "evaluate_run",
    "write_translations",
]
