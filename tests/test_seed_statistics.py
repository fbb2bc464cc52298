"""Mean and spread over seeds."""

import math

import pytest

from tx_keras.claims.seed_statistics import SeedStats


def test_mean_and_sample_sd():
    stats = SeedStats((0.5, 0.7, 0.9), diverged=1, missing=2)
    assert stats.n == 3
    assert stats.mean == pytest.approx(0.7)
    assert stats.sd == pytest.approx(0.2)  # n - 1 in the denominator
    assert stats.text() == "0.700 ± 0.200"
    assert (stats.diverged, stats.missing) == (1, 2)


def test_fewer_than_two_seeds_have_no_spread():
    assert math.isnan(SeedStats((0.4,)).sd)
    assert SeedStats((0.4,)).text() == "0.400"
    assert SeedStats(()).text() == "n/a" and math.isnan(SeedStats(()).mean)
