"""The verdict rules, as pure functions of the per-setting results (rule changes and their dates: CHANGES).

One vocabulary for every claim (`welch_test.py`): HOLDS when the claimed difference is significant, Welch's
t-test over seeds one-sided in the claimed direction at p < 0.05 (plus the claim's own thresholds);
DOES_NOT_HOLD only when the equivalence test (TOST, p < 0.05) shows the difference to be smaller than a
margin fixed in the rule; INCONCLUSIVE otherwise. A rule whose settings are missing or have fewer than 2
usable seeds is inconclusive, and so is a sweep in which no setting learned the task at all (every setting
below the claim's own `floor`): then the comparison the claim asks for never happened. Every comparison
runs at its metric's resolution (a step count read once per epoch resolves one epoch of steps). The numbers
a verdict rests on are in its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting, select, value_of
from tx_keras.claims.welch_test import ALPHA, RESOLUTION, Comparison, welch

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"

# Which rules changed after which results: the report prints these, so no reader takes a rule changed
# after a result for one fixed before it.
CHANGES = (
    "2026-11-30, after the 2026-11-29 results: Welch's t-test replaced 'the difference exceeds 2 pooled "
    "sd' in every rule, and the floor rule (inconclusive when no setting learned the task) was added; "
    "it moved the heads claim from 'does not hold' to 'inconclusive'",
    "2026-12-02, after the 2026-11-29 and 2026-12-01 results: one vocabulary for every claim: 'holds' "
    "needs Welch one-sided p < 0.05 in the claimed direction (before: two-sided p < 0.05 plus the sign, "
    "a one-sided test at 2.5 %); 'does not hold' needs TOST p < 0.05 against the margin each rule now "
    "states (before: any difference that was not significant); step counts compared at one epoch of "
    "steps (before: 1 step). It moved the norm claim from 'inconclusive' to 'does not hold' (warm-up "
    "is shown not to rescue post-LN at lr 1e-2)",
)

Stats = Mapping[Setting, SeedStats]


@dataclass(frozen=True)
class Verdict:
    """`outcome` is HOLDS, DOES_NOT_HOLD or INCONCLUSIVE; `reason` gives the numbers; `notes` what the
    rule does not decide but the report should say (the nuance, where an effect shows)."""

    outcome: str
    reason: str
    notes: tuple[str, ...] = ()


def _usable(**named: SeedStats | None) -> str | None:
    """Why these settings cannot be judged (missing, or under 2 usable seeds), or None."""
    for name, stats in named.items():
        if stats is None:
            return f"no runs for {name}"
        if stats.n < 2:
            return f"{name} has {stats.n} usable seed(s); the rule needs at least 2"
    return None


def _compare(better: SeedStats, worse: SeedStats, resolution: float = RESOLUTION) -> Comparison:
    """Welch's test of `better` against `worse` (both with >= 2 seeds); `.real` is the rule's yes."""
    return welch(better.mean, better.sd, better.n, worse.mean, worse.sd, worse.n, resolution)


def _never_learned(stats: Stats, floor: float, what: str) -> Verdict | None:
    """INCONCLUSIVE when every setting of the sweep stayed below `floor` (the claim's level of a model that
    has not learned the task): an experiment that failed says nothing for or against the claim."""
    means = [side.mean for side in stats.values() if side.n]
    if means and max(means) < floor:
        return Verdict(
            INCONCLUSIVE,
            f"no setting learned the task: every setting's {what} is below {floor:.3f} (best "
            f"{max(means):.3f}), so the comparison the claim asks for never happened",
        )
    return None


def decide(
    comparison: Comparison, margin: float, numbers: str, notes: tuple[str, ...] = (), digits: int = 3
) -> Verdict:
    """The shared vocabulary: HOLDS if the claimed difference is significant (one-sided Welch), DOES_NOT_HOLD
    if TOST shows it within ± `margin`, else INCONCLUSIVE; `numbers` is the reason, the tests appended."""
    numbers = f"{numbers}; {comparison.text(digits, margin)}"
    if comparison.real:
        return Verdict(HOLDS, numbers, notes)
    if comparison.equivalent(margin):
        return Verdict(DOES_NOT_HOLD, numbers + f"; the difference is shown to be under {margin:g}", notes)
    if comparison.p > 1 - ALPHA:  # significant the other way: said, but TOST alone decides DOES_NOT_HOLD
        opposite = f"; the opposite difference is significant (one-sided p {1 - comparison.p:.2g})"
        return Verdict(INCONCLUSIVE, numbers + opposite + f", not shown to be under {margin:g}", notes)
    return Verdict(INCONCLUSIVE, numbers + f"; neither significant nor shown to be under {margin:g}", notes)


def _judged(
    stats: Stats, pair: Mapping[str, SeedStats | None], floor: float, what: str
) -> Verdict | Comparison:
    """Welch's test of the first setting of `pair` (name -> its seeds) against the second; INCONCLUSIVE
    instead when either cannot be judged (`_usable`) or the sweep learned nothing (`_never_learned`)."""
    problem = _usable(**pair)
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    failed = _never_learned(stats, floor, what)
    if failed:
        return failed
    better, worse = pair.values()
    return _compare(better, worse)


def eos_counted(threshold: float, length: int) -> float:
    """A symbol-accuracy threshold restated for token accuracy over `length` symbols plus the EOS, which
    every model (even one without context) predicts from its position: (length * t + 1) / (length + 1)."""
    return (length * threshold + 1) / (length + 1)


def attention_verdict(
    stats: Stats, length: int, off_at_most: float = 0.08, on_at_least: float = 0.95, margin: float = 0.05
) -> Verdict:
    """Claim 1. Holds if without attention the token accuracy stays at the per-position level
    (<= `off_at_most` of the symbols), with attention it reaches `on_at_least` (both restated with the
    always-predictable EOS counted, `eos_counted`) and attention is better (one-sided Welch p < 0.05).
    Does not hold if TOST shows attention's gain under `margin` token accuracy; otherwise inconclusive,
    and inconclusive too when even attention stays at the per-position level (nothing learned the task)."""
    on = select(stats, {"model.attention": "full"})
    off = select(stats, {"model.attention": "none"})
    low, high = eos_counted(off_at_most, length), eos_counted(on_at_least, length)
    comparison = _judged(stats, {"attention=full": on, "attention=none": off}, low, "token accuracy")
    if isinstance(comparison, Verdict):
        return comparison
    numbers = (
        f"token accuracy with attention {on.text()}, without {off.text()} (rule: without <= {low:.3f}, "
        f"with >= {high:.3f}, i.e. {off_at_most} and {on_at_least} of the {length} symbols, EOS counted)"
    )
    verdict = decide(comparison, margin, numbers)
    if verdict.outcome == HOLDS and not (off.mean <= low and on.mean >= high):
        return Verdict(INCONCLUSIVE, verdict.reason + "; attention helps but the levels are not the rule's")
    return verdict


def steps_text(found: tuple[int | None, ...]) -> str:
    """`1320 ± 76 (3 of 3 reached)`: the steps of the seeds that reached a target, and how many did."""
    reached = [float(step) for step in found if step is not None]
    if not found:
        return "n/a"
    text = SeedStats(tuple(reached)).text(0) if reached else "never"
    return f"{text} ({len(reached)} of {len(found)} reached)"


def ffn_verdict(
    stats: Stats,
    steps: Mapping[Setting, tuple[int | None, ...]] | None = None,
    min_gap: float = 0.10,
    floor: float = 0.10,
) -> Verdict:
    """Claim 2, restated: the FFN adds per-token memory. Holds if on the random lookup table one layer with
    the FFN recalls more facts than without (one-sided Welch p < 0.05) and by at least `min_gap`; does
    not hold if TOST shows the difference under `min_gap` (the margin); otherwise inconclusive, and
    inconclusive when no setting recalls even `floor` of the facts (chance is 1/29 = 0.034: nothing
    learned the table). The notes give the nuance: how fast each memorises (`steps` to the target
    accuracy), modular addition with and without the FFN, and a 2-layer attention-only model on the table."""
    one = {"model.num_encoder_layers": 1}
    with_ffn = select(stats, {"data": "lookup", "model.ffn": True, **one})
    without = select(stats, {"data": "lookup", "model.ffn": False, **one})
    pair = {"lookup, 1 layer, FFN on": with_ffn, "lookup, 1 layer, FFN off": without}
    comparison = _judged(stats, pair, floor, "share of facts recalled")
    if isinstance(comparison, Verdict):
        return comparison
    gap = comparison.difference
    numbers = (
        f"lookup facts recalled, 1 layer: FFN on {with_ffn.text()}, off {without.text()} (rule: one-sided "
        f"p < 0.05 and >= {min_gap}; does not hold if shown under {min_gap})"
    )
    notes = []
    if steps:
        fast = select(steps, {"data": "lookup", "model.ffn": True, **one})
        slow = select(steps, {"data": "lookup", "model.ffn": False, **one})
        if fast is not None and slow is not None:
            notes.append(
                f"lookup, 1 layer, steps to the target accuracy: FFN on {steps_text(fast)}, "
                f"off {steps_text(slow)}"
            )
    add_on = select(stats, {"data": "modular_addition", "model.ffn": True, **one})
    add_off = select(stats, {"data": "modular_addition", "model.ffn": False, **one})
    if add_on and add_off and add_on.n and add_off.n:
        notes.append(
            f"modular addition, 1 layer: FFN on {add_on.text()}, off {add_off.text()} "
            f"(difference {add_on.mean - add_off.mean:.3f}): structure is computed without the FFN's memory"
        )
    deep = select(stats, {"data": "lookup", "model.ffn": False, "model.num_encoder_layers": 2})
    if deep and deep.n:
        notes.append(
            f"lookup, 2 layers, attention only: {deep.text()}; "
            + (
                "attention, softmax and LayerNorm store arbitrary facts too, so 'only linear weighting' "
                "understates them"
                if deep.mean >= 0.95
                else "a second attention layer does not make up for the missing FFN here"
            )
        )
    verdict = decide(comparison, min_gap, numbers, tuple(notes))
    if verdict.outcome == HOLDS and gap < min_gap:
        return Verdict(
            INCONCLUSIVE, verdict.reason + f"; the difference is real but under {min_gap}", verdict.notes
        )
    return verdict


def residual_verdict(
    stats: Stats, on_at_least: float = 0.90, min_gap: float = 0.30, floor: float = eos_counted(0.08, 12)
) -> Verdict:
    """Claim 3. At the deepest depth swept, post-LN: holds if with the Add the model reaches
    `on_at_least` token accuracy and beats the model without it (one-sided Welch p < 0.05) by at least
    `min_gap`; does not hold if TOST shows the difference under `min_gap`; otherwise inconclusive, and
    inconclusive when no setting beats `floor`, a per-position predictor's level on sort (0.08 of the 12
    symbols, EOS counted). The notes give every depth and norm."""
    depths = sorted({value_of(setting, "model.num_encoder_layers") for setting in stats} - {None})
    if not depths:
        return Verdict(INCONCLUSIVE, "no runs with model.num_encoder_layers")
    deepest = depths[-1]
    pick = {"model.num_encoder_layers": deepest, "model.norm": "post"}
    on = select(stats, {**pick, "model.residual": True})
    off = select(stats, {**pick, "model.residual": False})
    pair = {f"{deepest} layers with the Add": on, f"{deepest} layers without": off}
    comparison = _judged(stats, pair, floor, "token accuracy")
    if isinstance(comparison, Verdict):
        return comparison
    gap = comparison.difference
    numbers = (
        f"{deepest} layers, post-LN: with the Add {on.text()}, without {off.text()} (rule: with >= "
        f"{on_at_least}, one-sided p < 0.05 and a difference >= {min_gap}; does not hold if shown under "
        f"{min_gap})"
    )
    notes = []
    for norm in ("post", "none"):
        cells = []
        for depth in depths:
            pair = [
                select(stats, {"model.num_encoder_layers": depth, "model.norm": norm, "model.residual": r})
                for r in (True, False)
            ]
            if all(pair):
                cells.append(f"{depth}: {pair[0].text()} vs {pair[1].text()}")
        if cells:
            notes.append(f"norm={norm}, with vs without the Add, by depth: " + "; ".join(cells))
    verdict = decide(comparison, min_gap, numbers, tuple(notes))
    if verdict.outcome == HOLDS and not (on.mean >= on_at_least and gap >= min_gap):
        return Verdict(
            INCONCLUSIVE, verdict.reason + "; significant, but not by the rule's levels", verdict.notes
        )
    return verdict


def norm_verdict(stats: Stats, floor: float = eos_counted(0.08, 12), margin: float = 0.10) -> Verdict:
    """Claim 4 (Xiong et al. 2020). At the largest learning rate swept: (a) without warm-up pre-LN beats
    post-LN, and (b) warm-up (the longest swept) rescues post-LN: it beats post-LN without warm-up (each
    one-sided Welch p < 0.05). Holds if both; does not hold if either half is shown absent (TOST: the
    difference under `margin` token accuracy), since the claim needs both; otherwise inconclusive, and
    inconclusive when no setting beats `floor` (a per-position predictor's level on sort). The notes say
    at which learning rates (a) and (b) show."""
    rates = sorted({value_of(setting, "trainer.learning_rate") for setting in stats} - {None})
    warmups = sorted({value_of(setting, "trainer.warmup_steps") for setting in stats} - {None})
    if not rates or len(warmups) < 2 or warmups[0] != 0:
        return Verdict(INCONCLUSIVE, "the sweep needs trainer.learning_rate values and warm-up 0 and > 0")
    top, longest = rates[-1], warmups[-1]
    at = {"trainer.learning_rate": top}
    post_cold = select(stats, {**at, "model.norm": "post", "trainer.warmup_steps": 0})
    pre_cold = select(stats, {**at, "model.norm": "pre", "trainer.warmup_steps": 0})
    post_warm = select(stats, {**at, "model.norm": "post", "trainer.warmup_steps": longest})
    problem = _usable(
        **{
            f"post-LN lr {top} no warm-up": post_cold,
            f"pre-LN lr {top} no warm-up": pre_cold,
            f"post-LN lr {top} warm-up {longest}": post_warm,
        }
    )
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    failed = _never_learned(stats, floor, "token accuracy")
    if failed:
        return failed
    pre, warm = _compare(pre_cold, post_cold), _compare(post_warm, post_cold)
    first, second = pre.real, warm.real

    def answer(comparison: Comparison) -> str:
        return "yes" if comparison.real else "shown absent" if comparison.equivalent(margin) else "unclear"

    numbers = (
        f"lr {top}: post-LN without warm-up {post_cold.text()}, pre-LN without warm-up {pre_cold.text()} "
        f"(a: {pre.text(margin=margin)}: {answer(pre)}); "
        f"post-LN with {longest} warm-up steps {post_warm.text()} "
        f"(b: {warm.text(margin=margin)}: {answer(warm)})"
    )
    comparisons = {
        "pre-LN beats post-LN without warm-up": (("pre", 0), ("post", 0)),
        f"warm-up {longest} rescues post-LN": (("post", longest), ("post", 0)),
    }
    notes = []
    for label, sides in comparisons.items():
        shows = []
        for rate in rates:
            at_rate = {"trainer.learning_rate": rate}
            pair = [
                select(stats, {**at_rate, "model.norm": norm, "trainer.warmup_steps": warm})
                for norm, warm in sides
            ]
            if all(pair) and all(side.n >= 2 for side in pair):
                comparison = _compare(*pair)
                answer = "yes" if comparison.real else "no"
                shows.append(f"{rate}: {answer} ({pair[0].text()} vs {pair[1].text()}, p {comparison.p:.2g})")
        if shows:
            notes.append(f"{label}, by learning rate: " + "; ".join(shows))
    diverged = {
        norm: (sum(side.diverged for side in sides), sum(len(side.values) for side in sides))
        for norm in ("post", "pre", "none")
        if (sides := [side for setting, side in stats.items() if value_of(setting, "model.norm") == norm])
    }
    if any(count for count, _ in diverged.values()):
        notes.append(
            "runs whose loss became NaN, by norm: "
            + ", ".join(f"{norm} {count} of {runs}" for norm, (count, runs) in diverged.items())
        )
    notes = tuple(notes)
    if first and second:
        return Verdict(HOLDS, numbers, notes)
    if pre.equivalent(margin) or warm.equivalent(margin):
        return Verdict(
            DOES_NOT_HOLD, numbers + f"; a half of the rule is shown absent (under {margin})", notes
        )
    return Verdict(INCONCLUSIVE, numbers + "; neither both halves shown nor one shown absent", notes)


def heads_verdict(
    accuracy: Stats,
    steps: Mapping[Setting, tuple[int | None, ...]],
    target: float = 0.99,
    floor: float = 0.5,
    steps_per_epoch: int = 1,
    margin: float = 0.02,
    margin_epochs: int = 2,
) -> Verdict:
    """Claim 5 (Vaswani et al. 2017, Table 3 row A). 4 heads against 1: when both reach `target` token
    accuracy on every seed, fewer steps to it (one-sided Welch p < 0.05; the steps are read once per
    epoch, so they resolve `steps_per_epoch` steps, and equal epochs are no difference), else the higher
    final accuracy. Holds if 4 heads win; does not hold if TOST shows the difference under the margin
    (`margin_epochs` epochs of steps, or `margin` token accuracy); otherwise inconclusive, and
    inconclusive when no head count reaches `floor`: half the answers right is far above the recall
    plateau (~0.2, predicting from the values present without finding the queried key), far below a
    solved task."""
    one, four = select(accuracy, {"model.num_heads": 1}), select(accuracy, {"model.num_heads": 4})
    problem = _usable(**{"1 head": one, "4 heads": four})
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    one_steps = select(steps, {"model.num_heads": 1}) or ()
    four_steps = select(steps, {"model.num_heads": 4}) or ()
    reached = all(s is not None for s in (*one_steps, *four_steps)) and one_steps and four_steps
    if reached:
        slow, fast = SeedStats(tuple(map(float, one_steps))), SeedStats(tuple(map(float, four_steps)))
        comparison = _compare(slow, fast, resolution=float(steps_per_epoch))  # one epoch of steps
        numbers = (
            f"both reach {target} on every seed; steps to {target}: 1 head {slow.text(0)}, 4 heads "
            f"{fast.text(0)} (read once per epoch of {steps_per_epoch} steps); 4 heads faster"
        )
        return decide(comparison, float(margin_epochs * steps_per_epoch), numbers, digits=0)
    failed = _never_learned(accuracy, floor, "token accuracy")
    if failed:
        return failed
    numbers = f"token accuracy: 1 head {one.text()}, 4 heads {four.text()}; 4 heads higher"
    return decide(_compare(four, one), margin, numbers)


CHRF_RESOLUTION = 0.01  # chrF and BLEU are 0-100 scores read to 2 decimals


def heads_text_verdict(
    chrf: Stats, bleu: Stats | None = None, floor: float = 20.0, margin: float = 1.0
) -> Verdict:
    """Claim 5 on real text (Vaswani et al. 2017, Table 3 row A, at the model's fixed width): 8 heads
    against 1 on validation chrF. Holds if 8 heads score higher (one-sided Welch p < 0.05); does not hold
    if TOST shows the difference under `margin` chrF; inconclusive otherwise (the smallest difference the
    seeds could have called real is in the reason), and when no head count reaches `floor`
    chrF: every degenerate output measured on Tatoeba eng-fra scores below it (the English source copied
    13.4, one fixed French sentence <= 8.2, the most frequent French words 7.9), a trained preset 56-58.
    BLEU is printed beside; the notes compare 32 heads with 8 (the paper: 0.4 BLEU short) and with 1."""
    heads = {count: select(chrf, {"model.num_heads": count}) for count in (1, 8, 32)}
    problem = _usable(**{"1 head": heads[1], "8 heads": heads[8]})
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    failed = _never_learned(chrf, floor, "validation chrF")
    if failed:
        return failed

    def bleu_text(count: int) -> str:
        side = select(bleu, {"model.num_heads": count}) if bleu else None
        return f" (BLEU {side.text(2)})" if side else ""

    def compared(better: int, worse: int) -> tuple[Comparison, str]:
        comparison = _compare(heads[better], heads[worse], CHRF_RESOLUTION)
        text = (
            f"validation chrF {better} heads {heads[better].text(2)}{bleu_text(better)}, {worse} "
            f"head{'s' if worse > 1 else ''} {heads[worse].text(2)}{bleu_text(worse)}; "
            f"{better} minus {worse}"
        )
        return comparison, text

    comparison, numbers = compared(8, 1)
    notes = []
    if heads[32] is not None and heads[32].n >= 2:
        for worse in (8, 1):
            against, text = compared(32, worse)
            shows = against.p_two_sided < ALPHA
            answer = (
                "higher" if shows and against.difference > 0 else "lower" if shows else "no difference shown"
            )
            notes.append(
                f"32 heads against {worse}: {answer}; {text}: {against.difference:.2f} "
                f"(Welch two-sided p {against.p_two_sided:.2g}, Hedges g {against.hedges_g:.3g})"
            )
        notes.append("the paper: 32 heads 25.4 BLEU, 0.4 short of 8 heads (dev set, newstest2013)")
    return decide(comparison, margin, numbers, tuple(notes))
