"""Every claim re-judged from docs/claims.md's published mean ± sd (3 seeds each; the sweep folders
themselves are not kept) under the rules of 2026-12-02 (one-sided Welch for "holds", TOST against the
rule's margin for "does not hold"). Three values mean - sd, mean, mean + sd have exactly that mean and
sample sd, so the verdict functions run unchanged. The norm verdict is the one that moved."""

from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import make_setting
from tx_keras.claims.verdicts import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    attention_verdict,
    ffn_verdict,
    heads_text_verdict,
    heads_verdict,
    norm_verdict,
    residual_verdict,
)


def three(mean: float, sd: float) -> SeedStats:
    return SeedStats((mean - sd, mean, mean + sd))


def test_attention_still_holds():
    verdict = attention_verdict(
        {
            make_setting({"model.attention": "full"}): three(1.000, 0.000),
            make_setting({"model.attention": "none"}): three(0.138, 0.004),
        },
        length=12,
    )
    assert verdict.outcome == HOLDS and "difference 0.862 (Welch one-sided p 1e-06" in verdict.reason


def test_ffn_still_does_not_hold():
    rows = [
        ("lookup", 1, False, 0.993, 0.006),
        ("lookup", 1, True, 0.995, 0.009),
        ("lookup", 2, False, 0.997, 0.004),
        ("lookup", 2, True, 0.998, 0.004),
        ("modular_addition", 1, False, 1.0, 0.0),
        ("modular_addition", 1, True, 1.0, 0.0),
    ]
    stats = {
        make_setting({"data": data, "model.num_encoder_layers": layers, "model.ffn": ffn}): three(mean, sd)
        for data, layers, ffn, mean, sd in rows
    }
    verdict = ffn_verdict(stats)
    assert verdict.outcome == DOES_NOT_HOLD and "difference 0.002 (Welch one-sided p 0.38" in verdict.reason
    assert "within ± 0.1: TOST p 0.00012)" in verdict.reason  # shown to be under the rule's 0.10


def test_residual_still_holds():
    rows = [
        (2, "post", (0.994, 0.009), (0.193, 0.002)),
        (4, "post", (0.998, 0.002), (0.173, 0.004)),
        (8, "post", (0.981, 0.015), (0.108, 0.003)),
        (2, "none", (0.972, 0.010), (0.216, 0.057)),
        (4, "none", (0.970, 0.008), (0.104, 0.008)),
        (8, "none", (0.945, 0.040), (0.077, 0.000)),
    ]
    stats = {}
    for depth, norm, on, off in rows:
        for residual, values in ((True, on), (False, off)):
            knobs = {"model.num_encoder_layers": depth, "model.norm": norm, "model.residual": residual}
            stats[make_setting(knobs)] = three(*values)
    verdict = residual_verdict(stats)
    assert verdict.outcome == HOLDS and "difference 0.873 (Welch one-sided p 2.7e-05" in verdict.reason


def test_norm_moves_from_inconclusive_to_does_not_hold():
    """(a) still shows; (b), warm-up rescuing post-LN at lr 1e-2 (0.069 ± 0.014 vs 0.069 ± 0.013), is now
    shown absent by TOST within 0.10, and the claim needs both halves."""
    table = {
        "post": [
            (0.986, 0.008),
            (0.970, 0.038),
            (0.440, 0.010),
            (0.939, 0.017),
            (0.069, 0.013),
            (0.069, 0.014),
        ],
        "pre": [
            (0.991, 0.002),
            (0.976, 0.026),
            (0.767, 0.102),
            (0.964, 0.016),
            (0.469, 0.017),
            (0.869, 0.013),
        ],
        "none": [(0.936, 0.035), (0.944, 0.003), (0.933, 0.024), (0.898, 0.035), None, None],
    }
    stats = {}
    for norm, cells in table.items():
        for i, cell in enumerate(cells):
            knobs = {"model.norm": norm, "trainer.learning_rate": (1e-3, 3e-3, 1e-2)[i // 2]}
            knobs["trainer.warmup_steps"] = (0, 300)[i % 2]
            stats[make_setting(knobs)] = three(*cell) if cell else SeedStats((0.0, 0.0, 0.0), diverged=3)
    verdict = norm_verdict(stats)
    assert verdict.outcome == DOES_NOT_HOLD and "a half of the rule is shown absent" in verdict.reason
    assert ": yes); post-LN with 300" in verdict.reason and verdict.reason.count("shown absent") == 2
    assert "0.003: yes (0.767 ± 0.102 vs 0.440 ± 0.010, p 0.015)" in verdict.notes[0]


def test_heads_changes_to_inconclusive():
    """Was "does not hold at this scale": no head count left the recall plateau, so nothing was compared."""
    rows = [(1, 0.208, 0.008), (2, 0.205, 0.006), (4, 0.203, 0.006), (8, 0.201, 0.008), (16, 0.202, 0.006)]
    accuracy = {make_setting({"model.num_heads": heads}): three(mean, sd) for heads, mean, sd in rows}
    never = {setting: (None, None, None) for setting in accuracy}
    verdict = heads_verdict(accuracy, never)
    assert verdict.outcome == INCONCLUSIVE and "(best 0.208)" in verdict.reason


def test_heads_on_text_is_still_inconclusive():
    """8 heads 38.00 ± 0.74 chrF, 1 head 37.66 ± 1.10: neither significant nor shown under 1 chrF."""
    heads = {1: (37.66, 1.10), 8: (38.00, 0.74), 32: (33.92, 1.63)}
    chrf = {make_setting({"model.num_heads": count}): three(*cell) for count, cell in heads.items()}
    verdict = heads_text_verdict(chrf)
    assert verdict.outcome == INCONCLUSIVE and "difference 0.340 (Welch one-sided p 0.34" in verdict.reason
    assert "32 heads against 8: lower" in verdict.notes[0] and "two-sided p 0.033" in verdict.notes[0]
