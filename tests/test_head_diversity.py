"""Head diversity on attention weights whose answer is known by hand."""

import numpy as np
import pytest

from tx_keras.diagnostics.head_diversity import head_diversity


def _one_hot(heads_keys: list[int], keys: int = 4, queries: int = 3) -> np.ndarray:
    """(1, h, Tq, Tk): head i puts all its weight on key heads_keys[i] at every query."""
    weights = np.zeros((1, len(heads_keys), queries, keys))
    for head, key in enumerate(heads_keys):
        weights[0, head, :, key] = 1.0
    return weights


def test_identical_heads_do_not_diverge_and_disjoint_heads_diverge_by_one_bit():
    same = head_diversity(_one_hot([0, 0, 0]))
    assert same.divergence == pytest.approx(0.0, abs=1e-12) and same.focused == 1.0
    apart = head_diversity(_one_hot([0, 1, 2, 3]))
    assert apart.divergence == pytest.approx(1.0) and apart.focused == 1.0


def test_a_single_head_has_no_pair_and_a_uniform_head_is_not_focused():
    uniform = np.full((1, 1, 3, 4), 0.25)
    assert head_diversity(uniform) == head_diversity(uniform, np.ones((1, 3), bool))
    assert head_diversity(uniform).divergence == 0.0 and head_diversity(uniform).focused == 0.0


def test_one_hot_against_uniform_by_hand_and_half_the_heads_focused():
    weights = np.concatenate([_one_hot([0]), np.full((1, 1, 3, 4), 0.25)], axis=1)
    # P = (1, 0, 0, 0), Q = 1/4 each, M = (5/8, 1/8, 1/8, 1/8):
    # KL(P||M) = log2(8/5); KL(Q||M) = 1/4 log2(2/5) + 3/4 log2(2).
    expected = 0.5 * np.log2(8 / 5) + 0.5 * (0.25 * np.log2(0.25 / 0.625) + 0.75 * np.log2(2))
    result = head_diversity(weights)
    assert result.divergence == pytest.approx(expected)
    assert result.focused == 0.5


def test_padded_query_rows_are_left_out():
    weights = _one_hot([0, 1], queries=3)
    weights[0, :, 2] = [0.25, 0.25, 0.25, 0.25]  # a padded query row where both heads agree
    mask = np.array([[True, True, False]])
    assert head_diversity(weights, mask).divergence == pytest.approx(1.0)
    assert head_diversity(weights).divergence == pytest.approx(2 / 3)
