"""export.length_penalty=auto: the best validation chrF wins, ties go to the first alpha of the grid."""

import pytest

from tx_keras.evaluation import choose_length_penalty


def test_the_best_validation_chrf_is_chosen_and_recorded():
    scores = {0.6: 55.96, 1.0: 56.25, 1.4: 56.23}
    asked = []

    def chrf(alpha: float) -> float:
        asked.append(alpha)
        return scores[alpha]

    choice = choose_length_penalty([0.6, 1.0, 1.4], chrf, beam_width=4)
    assert asked == [0.6, 1.0, 1.4] and choice.chosen == 1.0
    assert choice.record() == {
        "chosen": 1.0,
        "chosen_by": "validation chrF, beam width 4",
        "grid": [
            {"alpha": 0.6, "validation_chrf": 55.96},
            {"alpha": 1.0, "validation_chrf": 56.25},
            {"alpha": 1.4, "validation_chrf": 56.23},
        ],
    }


def test_ties_go_to_the_first_alpha_and_an_empty_grid_is_refused():
    assert choose_length_penalty([1.4, 0.6, 1.0], lambda alpha: 50.0, 2).chosen == 1.4
    with pytest.raises(ValueError, match="empty"):
        choose_length_penalty([], lambda alpha: 50.0, 2)
