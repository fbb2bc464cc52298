"""BLEU and chrF through the code path a run uses: ids -> Task.detokenize_target -> corpus_scores."""

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


def test_a_partial_prediction_scores_in_between_and_mismatched_lengths_fail():
    scores = corpus_scores(["L'homme qui rit.", "Salut !", "Il est venu."], REFERENCES)
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100
    with pytest.raises(ValueError, match="2 hypotheses for 3 references"):
        corpus_scores(["a", "b"], REFERENCES)
