"""The claims' verdict rules on hand-made per-setting results: holds (one-sided Welch), does not hold (TOST
against the rule's margin, both arms learned, Holm over several), inconclusive (nothing learned), and the
rule text built from the same thresholds the verdict applies."""

import datetime
from dataclasses import replace

import pytest

from tx_keras.claims.definitions import (
    ATTENTION,
    CLAIMS,
    FFN,
    HEADS,
    HEADS_TARGET,
    HEADS_TEXT,
    NORM,
    RESIDUAL,
)
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import make_setting, value_of
from tx_keras.claims.verdicts import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOTHING_LEARNED,
    Verdict,
    attention_verdict,
    eos_counted,
    ffn_verdict,
    heads_verdict,
    norm_verdict,
    residual_verdict,
)


def _stats(rows):
    """[(knobs, values), ...] -> {setting: SeedStats}."""
    return {make_setting(knobs): SeedStats(tuple(values)) for knobs, values in rows}


def test_eos_counted_restates_a_symbol_threshold_for_tokens_with_the_eos():
    assert eos_counted(0.08, 12) == pytest.approx(1.96 / 13)
    assert eos_counted(1.0, 12) == 1.0


def test_every_rule_text_is_built_from_the_thresholds_the_verdict_uses():
    for claim in CLAIMS.values():
        text = claim.rule.text()
        assert f"± {claim.rule.margin:g} ({claim.rule.margin_reason})" in text
        assert f"below {claim.rule.floor:.3g} ({claim.rule.floor_reason})" in text
        assert f"Set {claim.rule.set_on}" in text
    assert "no attention <= 0.151, attention >= 0.954" in ATTENTION.text()
    assert "a difference >= 0.3" in RESIDUAL.text() and "with the Add >= 0.9" in RESIDUAL.text()
    assert "2 epochs of steps" in HEADS.text()
    moved = replace(FFN, margin=0.2)  # change the threshold once: the text and the verdict both follow
    assert "± 0.2 (" in moved.text()


def test_a_result_from_runs_before_the_rule_is_exploratory():
    assert ATTENTION.predates(ATTENTION.set_on + datetime.timedelta(days=1))
    assert not ATTENTION.predates(datetime.date(2026, 11, 29)) and not ATTENTION.predates(None)
    verdict = Verdict(HOLDS, "numbers", exploratory=True)
    assert verdict.label == "exploratory (rule set after the runs): holds"
    assert Verdict(HOLDS, "numbers").label == "holds"


@pytest.mark.parametrize(
    ("on", "off", "outcome"),
    [
        ((0.99, 0.98, 1.0), (0.13, 0.14, 0.135), HOLDS),  # the arm without stays at the floor: the claim
        ((0.99, 0.98, 1.0), (0.30, 0.32, 0.31), INCONCLUSIVE),  # better, but context leaks in without it
        ((0.50, 0.20, 0.80), (0.30, 0.29, 0.31), INCONCLUSIVE),  # not significantly better, not shown equal
        ((0.50, 0.51, 0.505), (0.50, 0.505, 0.51), DOES_NOT_HOLD),  # shown within 0.05 (TOST)
        ((0.14, 0.13, 0.135), (0.13, 0.14, 0.135), NOTHING_LEARNED),  # equal at the floor says nothing
        ((0.50, 0.20, 0.80), (0.13, 0.14, 0.135), NOTHING_LEARNED),  # no TOST against an arm at the floor
        ((0.70, 0.72, 0.71), (0.13, 0.14, 0.135), INCONCLUSIVE),  # helps, but did not reach 0.954
        ((0.99,), (0.13, 0.14), INCONCLUSIVE),  # one seed cannot give a spread
    ],
)
def test_attention_rule(on, off, outcome):
    stats = _stats([({"model.attention": "full"}, on), ({"model.attention": "none"}, off)])
    verdict = attention_verdict(stats, ATTENTION)
    assert verdict.outcome == outcome
    if len(on) > 1:
        assert "(95 % interval; Welch one-sided p" in verdict.reason and "power at n 3" in verdict.reason


def test_attention_rule_without_the_runs_is_inconclusive():
    verdict = attention_verdict(_stats([({"model.attention": "full"}, (1.0, 1.0))]), ATTENTION)
    assert (verdict.outcome, verdict.reason) == (INCONCLUSIVE, "no runs for attention=none")


def _ffn(lookup_on, lookup_off, addition=((0.97, 0.99), (0.95, 0.96)), deep_off=(1.0, 0.99)):
    rows = [
        ({"data": "lookup", "model.ffn": "true", "model.num_encoder_layers": "1"}, lookup_on),
        ({"data": "lookup", "model.ffn": "false", "model.num_encoder_layers": "1"}, lookup_off),
        ({"data": "modular_addition", "model.ffn": "true", "model.num_encoder_layers": "1"}, addition[0]),
        ({"data": "modular_addition", "model.ffn": "false", "model.num_encoder_layers": "1"}, addition[1]),
        ({"data": "lookup", "model.ffn": "false", "model.num_encoder_layers": "2"}, deep_off),
        ({"data": "lookup", "model.ffn": "true", "model.num_encoder_layers": "2"}, (1.0, 1.0)),
    ]
    return ffn_verdict(_stats(rows), FFN)


def test_ffn_rule_holds_with_the_pilots_numbers_and_reports_the_nuance_untested():
    verdict = _ffn((0.99, 1.0, 1.0), (0.68, 0.71, 0.70))
    assert verdict.outcome == HOLDS
    assert "FFN on 0.997 ± 0.006, off 0.697 ± 0.015; difference +0.300 [+0.26" in verdict.reason
    assert verdict.notes[0] == (
        "modular addition, 1 layer: FFN on 0.980 ± 0.014, off 0.955 ± 0.007 (difference 0.025, not tested)"
    )
    assert verdict.notes[1] == "lookup, 2 layers, attention only: 0.995 ± 0.007 (not tested)"


def test_ffn_rule_does_not_hold_within_the_margin_and_is_inconclusive_for_a_small_gap():
    assert _ffn((0.80, 0.82, 0.81), (0.80, 0.81, 0.82)).outcome == DOES_NOT_HOLD  # shown under 0.10
    noisy = _ffn((0.80, 0.90, 0.70), (0.75, 0.85, 0.80))  # the same means, too noisy to show either
    assert noisy.outcome == INCONCLUSIVE and "neither significant nor shown to be under 0.1" in noisy.reason
    small = _ffn((0.95, 0.951, 0.952), (0.90, 0.901, 0.902))  # real (sd 0.001) but only 0.05
    assert small.outcome == INCONCLUSIVE and "not at the rule's levels" in small.reason


def test_ffn_rule_notes_how_fast_each_memorises():
    stats = _stats(
        [
            ({"data": "lookup", "model.ffn": "true", "model.num_encoder_layers": 1}, (1.0, 1.0, 0.999)),
            ({"data": "lookup", "model.ffn": "false", "model.num_encoder_layers": 1}, (0.99, 0.98, 0.985)),
        ]
    )
    on = make_setting({"data": "lookup", "model.ffn": "true", "model.num_encoder_layers": 1})
    off = make_setting({"data": "lookup", "model.ffn": "false", "model.num_encoder_layers": 1})
    verdict = ffn_verdict(stats, FFN, {on: (660, 792, 660), off: (1320, None, 1452)})
    assert verdict.outcome == INCONCLUSIVE  # real (Welch p < 0.05) but 0.015 < 0.10: the pre-stated bar
    assert verdict.notes == (
        "lookup, 1 layer, steps to the target accuracy: FFN on 704 ± 76 (3 of 3 reached), "
        "off 1386 ± 93 (2 of 3 reached)",
    )


def _residual(deep_on, deep_off):
    rows = []
    for depth in (2, 8):
        for norm in ("post", "none"):
            on, off = (deep_on, deep_off) if (depth, norm) == (8, "post") else ((0.99, 0.98), (0.5, 0.6))
            for residual, values in (("true", on), ("false", off)):
                knobs = {"model.num_encoder_layers": depth, "model.norm": norm, "model.residual": residual}
                rows.append((knobs, values))
    return residual_verdict(_stats(rows), RESIDUAL)


def test_residual_rule_judges_the_deepest_post_ln_stack():
    verdict = _residual((0.999, 0.998, 1.0), (0.18, 0.20, 0.17))
    assert verdict.outcome == HOLDS
    assert verdict.reason.startswith("8 layers, post-LN: with the Add 0.999 ± 0.001, without 0.183 ± 0.015")
    assert verdict.notes[0].startswith("norm=post, with vs without the Add, by depth (not tested): 2: ")
    assert _residual((0.95, 0.96, 0.97), (0.94, 0.97, 0.95)).outcome == DOES_NOT_HOLD
    assert _residual((0.60, 0.61, 0.62), (0.18, 0.20, 0.17)).outcome == INCONCLUSIVE  # the Add model stalled


def _norm(post_cold, pre_cold, post_warm):
    rows = []
    for lr in ("1e-3", "3e-3", "1e-2"):
        for norm in ("post", "pre", "none"):
            for warmup in (0, 300):
                values = (0.9, 0.91, 0.92)
                if lr == "1e-2" and warmup == 0 and norm in ("post", "pre"):
                    values = post_cold if norm == "post" else pre_cold
                if lr == "1e-2" and warmup == 300 and norm == "post":
                    values = post_warm
                knobs = {"model.norm": norm, "trainer.learning_rate": lr, "trainer.warmup_steps": warmup}
                rows.append((knobs, values))
    return norm_verdict(_stats(rows), NORM)


def test_norm_rule_needs_both_halves_and_corrects_its_two_tosts_together():
    holds = _norm(post_cold=(0.06, 0.06, 0.07), pre_cold=(0.56, 0.5, 0.6), post_warm=(0.9, 0.95, 0.93))
    assert holds.outcome == HOLDS
    assert "(a) lr 0.01 without warm-up: pre-LN 0.553 ± 0.050, post-LN 0.063 ± 0.006" in holds.reason
    assert holds.notes[0].endswith("0.01: shows (0.553 ± 0.050 vs 0.063 ± 0.006, p 0.0016)")
    assert "0.001: not shown" in holds.notes[0]  # not significant is not "no"
    # (b) at the floor on both arms: the recorded case, equal for a reason that says nothing of the claim
    stuck = _norm(post_cold=(0.06, 0.06, 0.07), pre_cold=(0.56, 0.5, 0.6), post_warm=(0.06, 0.07, 0.06))
    assert stuck.outcome == NOTHING_LEARNED and "-> inconclusive (nothing learned)" in stuck.reason
    unclear = _norm(post_cold=(0.30, 0.31, 0.32), pre_cold=(0.56, 0.5, 0.6), post_warm=(0.30, 0.50, 0.40))
    assert unclear.outcome == INCONCLUSIVE
    neither = _norm(post_cold=(0.86, 0.84, 0.85), pre_cold=(0.86, 0.84, 0.85), post_warm=(0.84, 0.86, 0.85))
    assert neither.outcome == DOES_NOT_HOLD and "Holm over the TOSTs: (a) p" in neither.reason
    # each TOST alone is under 0.05 (p 0.035) but Holm doubles the smaller (0.069): not shown absent
    loose = _norm(post_cold=(0.9, 0.8, 0.85), pre_cold=(0.86, 0.84, 0.85), post_warm=(0.84, 0.86, 0.85))
    assert loose.outcome == INCONCLUSIVE


def test_norm_notes_count_the_diverged_runs_by_norm():
    rows = [
        ({"model.norm": norm, "trainer.learning_rate": "1e-2", "trainer.warmup_steps": warmup}, values)
        for norm, values in (("post", (0.06, 0.07, 0.06)), ("pre", (0.5, 0.6, 0.6)), ("none", (0, 0, 0)))
        for warmup in (0, 300)
    ]
    stats = {
        setting: SeedStats(seed.values, diverged=3 if value_of(setting, "model.norm") == "none" else 0)
        for setting, seed in _stats(rows).items()
    }
    expected = "runs whose loss became NaN, by norm: post 0 of 6, pre 0 of 6, none 6 of 6"
    assert norm_verdict(stats, NORM).notes[-1] == expected


def test_heads_rule_uses_steps_when_both_reach_the_target_else_accuracy():
    accuracy = _stats(
        [({"model.num_heads": 1}, (0.995, 0.996, 0.994)), ({"model.num_heads": 4}, (1.0, 1.0, 1.0))]
    )
    one, four = make_setting({"model.num_heads": 1}), make_setting({"model.num_heads": 4})
    faster = heads_verdict(
        accuracy, {one: (3000, 3200, 3100), four: (1000, 1100, 1050)}, HEADS, HEADS_TARGET, steps_per_epoch=50
    )
    assert faster.outcome == HOLDS and "difference +2050 [+1" in faster.reason
    same = heads_verdict(
        accuracy,
        {one: (1000, 1200, 1100), four: (1000, 1100, 1200)},
        HEADS,
        HEADS_TARGET,
        steps_per_epoch=100,
    )
    assert same.outcome == DOES_NOT_HOLD and "TOST within ± 200: p 0.035" in same.reason
    low = _stats([({"model.num_heads": 1}, (0.60, 0.62, 0.61)), ({"model.num_heads": 4}, (0.80, 0.81, 0.79))])
    assert heads_verdict(low, {one: (None,) * 3, four: (None,) * 3}, HEADS, HEADS_TARGET).outcome == HOLDS
    tie = _stats([({"model.num_heads": 1}, (0.60, 0.70, 0.65)), ({"model.num_heads": 4}, (0.66, 0.62, 0.70))])
    assert (
        heads_verdict(tie, {}, HEADS, HEADS_TARGET).outcome == INCONCLUSIVE
    )  # neither significant nor within 0.02
    close = _stats([({"model.num_heads": 1}, (0.70, 0.701, 0.702)), ({"model.num_heads": 4}, (0.701,) * 3)])
    assert heads_verdict(close, {}, HEADS, HEADS_TARGET).outcome == DOES_NOT_HOLD
    assert (
        heads_verdict(_stats([({"model.num_heads": 4}, (1.0, 1.0))]), {}, HEADS, HEADS_TARGET).outcome
        == INCONCLUSIVE
    )


def test_heads_rule_on_the_recall_plateau_is_nothing_learned():
    """docs/claims.md's sweep: every head count at ~0.2, under the floor 0.5: never compared."""
    plateau = _stats([({"model.num_heads": heads}, (0.21, 0.20, 0.215)) for heads in (1, 2, 4, 8, 16)])
    verdict = heads_verdict(plateau, {}, HEADS, HEADS_TARGET)
    assert verdict.outcome == NOTHING_LEARNED and verdict.reason.endswith("4 heads stays below the floor 0.5")


def test_the_claimed_direction_is_tested_one_sided_at_5_percent():
    """1 head 0.600 ± 0.050, 4 heads 0.705 ± 0.050: Welch's two-sided p is 0.062; one-sided 0.031."""
    accuracy = _stats(
        [({"model.num_heads": 1}, (0.55, 0.60, 0.65)), ({"model.num_heads": 4}, (0.655, 0.705, 0.755))]
    )
    verdict = heads_verdict(accuracy, {}, HEADS, HEADS_TARGET)
    assert verdict.outcome == HOLDS and "(95 % interval; Welch one-sided p 0.031" in verdict.reason


def test_step_counts_are_compared_at_one_epoch_of_steps():
    """Steps read once per epoch (200 steps): 1000 against 800 on every seed is sd 0 on both sides, one
    resolution step apart: not significant at one epoch, p ~ 1e-9 at a resolution of 1 step."""
    accuracy = _stats([({"model.num_heads": 1}, (0.995, 0.996, 0.994)), ({"model.num_heads": 4}, (1.0,) * 3)])
    one, four = make_setting({"model.num_heads": 1}), make_setting({"model.num_heads": 4})
    gap = heads_verdict(
        accuracy, {one: (1000,) * 3, four: (800,) * 3}, HEADS, HEADS_TARGET, steps_per_epoch=200
    )
    assert gap.outcome == INCONCLUSIVE and "Welch one-sided p 0.14" in gap.reason
    at_one_step = heads_verdict(
        accuracy, {one: (1000,) * 3, four: (800,) * 3}, HEADS, HEADS_TARGET, steps_per_epoch=1
    )
    assert at_one_step.outcome == HOLDS and "Welch one-sided p 8.3e-10" in at_one_step.reason


def test_the_heads_on_text_margin_says_does_not_hold_was_out_of_reach():
    """The recorded chrF (8 heads 38.00 ± 0.74, 1 head 37.66 ± 1.10): TOST power ~3 % at n = 3."""
    from tx_keras.claims.verdicts import heads_text_verdict
    from tx_keras.comparison.welch import values_of

    chrf = {
        make_setting({"model.num_heads": 8}): SeedStats(tuple(values_of(38.00, 0.74, 3))),
        make_setting({"model.num_heads": 1}): SeedStats(tuple(values_of(37.66, 1.10, 3))),
    }
    verdict = heads_text_verdict(chrf, HEADS_TEXT)
    assert verdict.outcome == INCONCLUSIVE and "TOST 3% at a true 0" in verdict.reason
    assert "'does not hold' is out of reach at this n (16 seeds a side would give 80%)" in verdict.reason
