"""Every claim re-judged from docs/claims.md's recorded mean ± sd (3 seeds each; the sweep folders are not
kept, so nothing is re-run): `values_of` gives 3 values with exactly that mean and sd, and the verdict
functions run unchanged. Two rule sets: the one in force before each claim's runs (the verdict of record:
'2 pooled sd' for claims 1-5, two-sided Welch for heads on text) and the current one, set after every
recorded run, whose results docs/claims.md reports as exploratory."""

import math

import pytest
from scipy import stats

from tx_keras.claims.definitions import ATTENTION, FFN, HEADS, HEADS_TARGET, HEADS_TEXT, NORM, RESIDUAL
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import make_setting
from tx_keras.claims.verdicts import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOTHING_LEARNED,
    attention_verdict,
    ffn_verdict,
    heads_text_verdict,
    heads_verdict,
    norm_verdict,
    residual_verdict,
)
from tx_keras.comparison.welch import values_of


def three(mean: float, sd: float) -> SeedStats:
    return SeedStats(tuple(values_of(mean, sd, 3)))


def apart(first: tuple[float, float], second: tuple[float, float]) -> bool:
    """The rule of 5cf5c64 (before the runs of claims 1-5): a difference is real above 2 pooled sd."""
    return abs(first[0] - second[0]) > 2 * math.sqrt((first[1] ** 2 + second[1] ** 2) / 2)


NORM_TABLE = {
    "post": [(0.986, 0.008), (0.970, 0.038), (0.440, 0.010), (0.939, 0.017), (0.069, 0.013), (0.069, 0.014)],
    "pre": [(0.991, 0.002), (0.976, 0.026), (0.767, 0.102), (0.964, 0.016), (0.469, 0.017), (0.869, 0.013)],
    "none": [(0.936, 0.035), (0.944, 0.003), (0.933, 0.024), (0.898, 0.035), None, None],
}


def test_the_verdicts_of_record_under_the_rules_that_predate_the_runs():
    # 1. attention: without <= 0.151, with >= 0.954, apart by 2 pooled sd -> holds
    assert apart((1.000, 0.000), (0.138, 0.004)) and 0.138 <= 0.151 and 1.000 >= 0.954
    # 2. FFN: within 2 pooled sd -> does not hold (the pre-registered wording)
    assert not apart((0.995, 0.009), (0.993, 0.006))
    # 3. Add: 0.981 >= 0.90, apart, gap 0.873 >= 0.30 -> holds
    assert apart((0.981, 0.015), (0.108, 0.003)) and 0.981 - 0.108 >= 0.30
    # 4. norm: (a) apart, (b) not -> "inconclusive if one"
    assert apart((0.469, 0.017), (0.069, 0.013)) and not apart((0.069, 0.014), (0.069, 0.013))
    # 5. heads: 4 heads do not win -> "does not hold at this scale" (no head count learned the task)
    assert not (0.203 > 0.208 and apart((0.203, 0.006), (0.208, 0.008)))
    # 6. heads on text (21e5693, before its runs): two-sided Welch p 0.68 -> inconclusive
    test = stats.ttest_ind_from_stats(38.00, 0.74, 3, 37.66, 1.10, 3, equal_var=False)
    assert test.pvalue == pytest.approx(0.68, abs=0.01)


def test_attention_exploratory_holds():
    verdict = attention_verdict(
        {
            make_setting({"model.attention": "full"}): three(1.000, 0.000),
            make_setting({"model.attention": "none"}): three(0.138, 0.004),
        },
        ATTENTION,
    )
    assert verdict.outcome == HOLDS
    assert "difference +0.862 [+0.853, +0.871] (95 % interval; Welch one-sided p 1e-06" in verdict.reason


def test_ffn_exploratory_does_not_hold_with_full_tost_power():
    rows = [
        ("lookup", 1, False, 0.993, 0.006),
        ("lookup", 1, True, 0.995, 0.009),
        ("lookup", 2, False, 0.997, 0.004),
        ("lookup", 2, True, 0.998, 0.004),
        ("modular_addition", 1, False, 1.0, 0.0),
        ("modular_addition", 1, True, 1.0, 0.0),
    ]
    stats_ = {
        make_setting({"data": data, "model.num_encoder_layers": layers, "model.ffn": ffn}): three(mean, sd)
        for data, layers, ffn, mean, sd in rows
    }
    verdict = ffn_verdict(stats_, FFN)
    assert verdict.outcome == DOES_NOT_HOLD and "difference +0.002 [-0.016, +0.020]" in verdict.reason
    assert "TOST within ± 0.1: p 0.00012" in verdict.reason and "TOST 100% at a true 0" in verdict.reason


def test_residual_exploratory_holds():
    rows = [
        (2, "post", (0.994, 0.009), (0.193, 0.002)),
        (4, "post", (0.998, 0.002), (0.173, 0.004)),
        (8, "post", (0.981, 0.015), (0.108, 0.003)),
        (2, "none", (0.972, 0.010), (0.216, 0.057)),
        (4, "none", (0.970, 0.008), (0.104, 0.008)),
        (8, "none", (0.945, 0.040), (0.077, 0.000)),
    ]
    stats_ = {}
    for depth, norm, on, off in rows:
        for residual, values in ((True, on), (False, off)):
            knobs = {"model.num_encoder_layers": depth, "model.norm": norm, "model.residual": residual}
            stats_[make_setting(knobs)] = three(*values)
    verdict = residual_verdict(stats_, RESIDUAL)
    assert verdict.outcome == HOLDS and "difference +0.873 [+0.838, +0.908]" in verdict.reason
    assert "Welch one-sided p 2.7e-05" in verdict.reason


def test_norm_is_inconclusive_nothing_learned():
    """(a) shows (0.469 against 0.069); (b) compares 0.069 with 0.069, both under the floor 0.151: equal
    because neither learned, which says nothing about warm-up. The claim needs both halves."""
    stats_ = {}
    for norm, cells in NORM_TABLE.items():
        for i, cell in enumerate(cells):
            knobs = {"model.norm": norm, "trainer.learning_rate": (1e-3, 3e-3, 1e-2)[i // 2]}
            knobs["trainer.warmup_steps"] = (0, 300)[i % 2]
            stats_[make_setting(knobs)] = three(*cell) if cell else SeedStats((0.0, 0.0, 0.0), diverged=3)
    verdict = norm_verdict(stats_, NORM)
    assert verdict.outcome == NOTHING_LEARNED
    assert "p 5.1e-06" in verdict.reason and "-> holds | (b)" in verdict.reason
    assert (
        "post-LN warm-up 300 stays below the floor 0.151 -> inconclusive (nothing learned)" in verdict.reason
    )
    assert "0.003: shows (0.767 ± 0.102 vs 0.440 ± 0.010, p 0.015)" in verdict.notes[0]
    assert "0.001: not shown (0.991 ± 0.002 vs 0.986 ± 0.008, p 0.2)" in verdict.notes[0]


def test_heads_is_nothing_learned():
    rows = [(1, 0.208, 0.008), (2, 0.205, 0.006), (4, 0.203, 0.006), (8, 0.201, 0.008), (16, 0.202, 0.006)]
    accuracy = {make_setting({"model.num_heads": heads}): three(mean, sd) for heads, mean, sd in rows}
    never = {setting: (None, None, None) for setting in accuracy}
    verdict = heads_verdict(accuracy, never, HEADS, HEADS_TARGET)
    assert verdict.outcome == NOTHING_LEARNED and "difference -0.005 [-0.022, +0.012]" in verdict.reason


def test_heads_on_text_is_inconclusive_and_32_heads_are_not_shown_worse_after_holm():
    heads = {1: (37.66, 1.10), 8: (38.00, 0.74), 32: (33.92, 1.63)}
    chrf = {make_setting({"model.num_heads": count}): three(*cell) for count, cell in heads.items()}
    verdict = heads_text_verdict(chrf, HEADS_TEXT)
    assert verdict.outcome == INCONCLUSIVE and "difference +0.34 [-1.91, +2.59]" in verdict.reason
    assert "Welch one-sided p 0.34" in verdict.reason and "TOST within ± 1: p 0.22" in verdict.reason
    assert verdict.notes[0].startswith(
        "32 heads against 8: no difference shown (Welch two-sided, Holm over the two: p 0.066)"
    )
    assert verdict.notes[1].startswith(
        "32 heads against 1: no difference shown (Welch two-sided, Holm over the two: p 0.066)"
    )
