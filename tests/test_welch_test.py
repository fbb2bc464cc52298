"""Welch's test, its TOST and their power: statsmodels' and scipy's own answers on the raw seeds, the
published-table route (`values_of`), the sd-0 case, and the simulated power pinned to known figures."""

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import effectsize_smd
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, ttest_ind, ttost_ind

from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.welch_test import compare
from tx_keras.comparison.power import seeds_for, tost_p, tost_power, welch_power
from tx_keras.comparison.welch import at_resolution, values_of, welch


def test_it_is_statsmodels_welch_test_on_the_raw_seeds():
    better, worse = np.array([0.99, 0.97, 1.0]), np.array([0.90, 0.93, 0.91, 0.95])
    t, p_two, df = CompareMeans(DescrStatsW(better), DescrStatsW(worse)).ttest_ind(usevar="unequal")
    got = welch(better, worse)
    assert (got.t, got.p_two_sided, got.df) == pytest.approx((t, p_two, df), rel=1e-9)
    _, p_larger, _ = ttest_ind(better, worse, usevar="unequal", alternative="larger")
    assert got.p_greater == pytest.approx(p_larger, rel=1e-9)
    low, high = CompareMeans(DescrStatsW(better), DescrStatsW(worse)).tconfint_diff(usevar="unequal")
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-9)
    g, _ = effectsize_smd(better.mean(), better.std(ddof=1), 3, worse.mean(), worse.std(ddof=1), 4)
    assert got.hedges_g == pytest.approx(g)
    claim = compare(SeedStats(tuple(better)), SeedStats(tuple(worse)))
    assert claim.real and claim.n == 3
    assert not compare(SeedStats((0.90, 0.91, 0.92)), SeedStats((0.97, 0.98, 0.99))).real  # the wrong way


def test_a_published_mean_and_sd_are_retested_exactly():
    values = values_of(0.469, 0.017, 3)
    assert values.mean() == pytest.approx(0.469) and values.std(ddof=1) == pytest.approx(0.017)
    five = values_of(2.0, 0.5, 5)
    assert five.mean() == pytest.approx(2.0) and five.std(ddof=1) == pytest.approx(0.5)


def test_tost_is_statsmodels_ttost_ind_and_the_simulation_uses_the_same_test():
    first, second = np.array([0.80, 0.82, 0.81]), np.array([0.80, 0.81, 0.82, 0.805])
    p_tost = ttost_ind(first, second, -0.05, 0.05, usevar="unequal")[0]
    got = welch(first, second)
    assert got.p_equivalent(0.05) == pytest.approx(p_tost, rel=1e-9) and p_tost < 0.05
    assert got.p_equivalent(0.005) > 0.05  # not within a margin below their noise
    assert float(tost_p(first, second, 0.05)) == pytest.approx(p_tost, rel=1e-9)  # the vectorised form


def test_sd_zero_on_both_sides_counts_only_differences_the_metric_resolves():
    raised = at_resolution([1.0, 1.0, 1.0], 0.001)
    assert raised.mean() == pytest.approx(1.0) and raised.std(ddof=1) == pytest.approx(0.001)
    assert welch([1.0] * 3, [0.999] * 3, 0.001).p_greater > 0.05  # one resolution step
    with pytest.raises(ValueError, match="resolution"):
        welch([1.0] * 3, [0.9] * 3)


def test_the_power_is_welchs_simulated_and_below_the_pooled_formula():
    """At n = 3, 2.7 sd: ~80 % one-sided (the pooled t would say 2.5 sd); at 0 the false-positive rate."""
    from statsmodels.stats.power import TTestIndPower

    assert welch_power(2.7, 3, 0.05) == pytest.approx(0.80, abs=0.015)
    assert welch_power(0.0, 3, 0.05) <= 0.05 + 0.004
    pooled = TTestIndPower().power(2.7, 3, 0.05, alternative="larger")
    assert welch_power(2.7, 3, 0.05) < pooled


def test_tost_power_of_the_heads_on_text_margin_and_the_seeds_it_would_need():
    """docs/claims.md: margin 1 chrF at a pooled sd 0.937 (margin/sd 1.07): ~3 % at n = 3."""
    assert tost_power(1.07, 3, 0.05) == pytest.approx(0.03, abs=0.01)
    needed = seeds_for(lambda n: tost_power(1.07, n, 0.05))
    assert tost_power(1.07, needed, 0.05) >= 0.8 > tost_power(1.07, needed - 1, 0.05)
    assert seeds_for(lambda n: 0.0) is None
