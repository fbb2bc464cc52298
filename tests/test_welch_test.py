"""Welch's t-test from summaries: scipy's answer on raw seeds, the sd-0 case, the effect size, the power."""

import math

import numpy as np
import pytest
from scipy import stats

from tx_keras.claims.welch_test import detectable_effect, least_significant, welch


def test_it_is_scipys_welch_test_on_the_raw_seeds():
    better, worse = np.array([0.99, 0.97, 1.0]), np.array([0.90, 0.93, 0.91])
    expected = stats.ttest_ind(better, worse, equal_var=False)
    got = welch(better.mean(), better.std(ddof=1), 3, worse.mean(), worse.std(ddof=1), 3)
    assert got.t == pytest.approx(expected.statistic) and got.p == pytest.approx(expected.pvalue)
    assert got.difference == pytest.approx(0.0733333, rel=1e-5) and got.real
    pooled = math.sqrt((better.var(ddof=1) + worse.var(ddof=1)) / 2)
    assert got.hedges_g == pytest.approx(got.difference / pooled * (1 - 3 / 15))  # J = 1 - 3/(4*6-9)
    assert not welch(0.91, 0.01, 3, 0.98, 0.01, 3).real  # significant, but the wrong way round


def test_sd_zero_on_both_sides_counts_only_differences_the_metric_resolves():
    assert welch(1.0, 0.0, 3, 1.0, 0.0, 3).p == pytest.approx(1.0)
    assert not welch(0.5004, 0.0, 3, 0.5, 0.0, 3).real  # below the resolution 0.001: not a difference
    assert welch(0.528, 0.0, 3, 0.5, 0.0, 3).real  # 28 resolution steps apart on every seed
    assert math.isfinite(welch(0.528, 0.0, 3, 0.5, 0.0, 3).t)


def test_the_threshold_is_the_least_significant_difference_of_that_pair():
    comparison = welch(0.5, 0.05, 3, 0.4, 0.05, 3)
    assert comparison.threshold == pytest.approx(stats.t.ppf(0.975, 4) * 0.05 * math.sqrt(2 / 3))
    assert welch(0.4 + comparison.threshold * 1.001, 0.05, 3, 0.4, 0.05, 3).p < 0.05
    assert welch(0.4 + comparison.threshold * 0.999, 0.05, 3, 0.4, 0.05, 3).p > 0.05


def test_what_three_seeds_a_side_can_detect():
    assert least_significant(3) == pytest.approx(2.267, abs=1e-3)
    assert detectable_effect(3) == pytest.approx(3.07, abs=0.01)
    assert detectable_effect(10) < 1.4  # more seeds, smaller effects
    with pytest.raises(ValueError, match=">= 2 seeds"):
        welch(1.0, 0.0, 1, 0.5, 0.1, 3)
