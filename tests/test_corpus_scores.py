"""BLEU and chrF through the code path a run uses: ids -> Task.detokenize_target -> corpus_scores."""

import math

import numpy as np
import pytest

from tx_keras.data import Task, Vocabulary
from tx_keras.data.text_format import TextFormat
from tx_keras.evaluation import corpus_scores

REFERENCES = ["L'homme qui rit.", "Salut !", "Il est parti en septembre."]


def _task() -> Task:
    tokens = ["L'", "##homme", "qui", "rit", "##.", "Salut", "!", "Il", "est", "parti", "en", "septembre."]
    vocab = Vocabulary(tokens)
    empty = np.zeros((1, 2), np.int32)
    return Task(
        "t",
        vocab,
        vocab,
        {s: (empty, empty) for s in ("train", "validation", "test")},
        TextFormat(),
        TextFormat(),
    )


def _ids(task: Task, pieces: list[list[str]]) -> np.ndarray:
    rows = [task.target_vocab.encode(p) + [Vocabulary.EOS] for p in pieces]
    width = max(map(len, rows))
    return np.array([row + [0] * (width - len(row)) for row in rows])


def test_a_perfect_prediction_scores_100():
    task = _task()
    pieces = [
        ["L'", "##homme", "qui", "rit", "##."],
        ["Salut", "!"],
        ["Il", "est", "parti", "en", "septembre."],
    ]
    hypotheses = [task.detokenize_target(row) for row in _ids(task, pieces)]
    assert hypotheses == REFERENCES  # the detokenizer restores the original spacing
    assert corpus_scores(hypotheses, REFERENCES) == pytest.approx({"bleu": 100.0, "chrf": 100.0})


def test_an_empty_prediction_scores_0():
    task = _task()
    hypotheses = [task.detokenize_target(row) for row in _ids(task, [[], [], []])]
    assert hypotheses == ["", "", ""]
    assert corpus_scores(hypotheses, REFERENCES) == {"bleu": 0.0, "chrf": 0.0}


def test_scores_are_sacrebleus_on_an_asymmetric_example_and_mismatched_lengths_fail():
    """A hypothesis shorter than its reference: BLEU's brevity penalty and chrF's recall weight make the
    scores change when hypotheses and references trade places, so arguments passed the wrong way fail."""
    hypotheses = ["L'homme qui rit.", "Salut !", "Il est venu."]
    scores = corpus_scores(hypotheses, REFERENCES)
    # BLEU by hand (13a tokens: "rit ." and "venu ." split off the full stop): 10 hypothesis tokens
    # against 12 reference tokens; matched 1- to 4-grams 9/10, 5/7, 2/4, 1/2
    precisions = [9 / 10, 5 / 7, 2 / 4, 1 / 2]
    bleu = 100 * math.exp(1 - 12 / 10) * math.prod(precisions) ** (1 / 4)
    assert scores["bleu"] == pytest.approx(bleu, rel=1e-9)  # 51.84; swapped, sacrebleu gives 43.17
    # chrF (character 6-grams, recall weighted by beta = 2), as sacrebleu 2.x computes it; swapped 71.13
    assert scores["chrf"] == pytest.approx(55.0676, abs=1e-3)
    with pytest.raises(ValueError, match="2 hypotheses for 3 references"):
        corpus_scores(["a", "b"], REFERENCES)
