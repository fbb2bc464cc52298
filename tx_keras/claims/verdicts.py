"""The verdict rules, as pure functions of the per-setting results and the claim's `Rule` (rule.py), which
holds every threshold once.

One vocabulary for every claim, applied by one helper (`judge_pair`): HOLDS when the claimed difference is
significant (Welch's t-test over seeds, one-sided in the claimed direction, at the rule's alpha) and the
rule's levels are met; DOES_NOT_HOLD only when the equivalence test (TOST) shows the difference within the
rule's margin, with both arms above the rule's floor (two arms that learned nothing are equal for a
reason that says nothing of the claim) and with several TOSTs behind one verdict Holm-corrected together;
NOTHING_LEARNED when an arm the decision needs stays below the floor; INCONCLUSIVE otherwise. The arm the
claim expects to fail may sit below the floor (that is the claimed effect in claims 1, 3 and 4a); the arm
it expects to win may not. Every comparison prints its difference with its 95 % interval and the power of
both tests for the n actually run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from tx_keras.claims.rule import Rule
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting, select, value_of
from tx_keras.claims.welch_test import RESOLUTION, Comparison, compare
from tx_keras.comparison.groups import holm

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOTHING_LEARNED = "inconclusive (nothing learned)"

Stats = Mapping[Setting, SeedStats]


@dataclass(frozen=True)
class Verdict:
    """`outcome` is one of the four above; `reason` gives the numbers; `notes` what the rule does not
    decide but the report should say; `exploratory` marks a result whose rule was set after its runs."""

    outcome: str
    reason: str
    notes: tuple[str, ...] = ()
    exploratory: bool = False

    @property
    def label(self) -> str:
        """The outcome as the report prints it: never a verdict when the rule came after the runs."""
        return f"exploratory (rule set after the runs): {self.outcome}" if self.exploratory else self.outcome


def _usable(**named: SeedStats | None) -> str | None:
    """Why these settings cannot be judged (missing, or under 2 usable seeds), or None."""
    for name, stats in named.items():
        if stats is None:
            return f"no runs for {name}"
        if stats.n < 2:
            return f"{name} has {stats.n} usable seed(s); the rule needs at least 2"
    return None


def judge_pair(
    better: SeedStats,
    worse: SeedStats,
    rule: Rule,
    numbers: str,
    margin: float | None = None,
    resolution: float = RESOLUTION,
    floor: float | None = None,
    digits: int = 3,
) -> tuple[str, str, Comparison]:
    """The shared skeleton: (outcome, reason, comparison) of `better` against `worse` by `rule` (its
    `margin` and `floor` unless given, e.g. for step counts), the tests, interval and power appended."""
    margin = rule.margin if margin is None else margin
    floor = rule.floor if floor is None else floor
    comparison = compare(better, worse, resolution)
    reason = (
        f"{numbers}; {comparison.text(digits)}; TOST within ± {margin:g}: p "
        f"{comparison.p_equivalent(margin):.2g}; "
        f"{comparison.power_text(max(rule.min_gap, margin), margin, rule.alpha)}"
    )
    if better.mean < floor:
        return NOTHING_LEARNED, reason + f"; {rule.better} stays below the floor {floor:.3g}", comparison
    levels = (
        (rule.better_at_least is None or better.mean >= rule.better_at_least)
        and (rule.worse_at_most is None or worse.mean <= rule.worse_at_most)
        and comparison.difference >= rule.min_gap
    )
    if comparison.p < rule.alpha:
        if levels:
            return HOLDS, reason, comparison
        return INCONCLUSIVE, reason + "; significant, but not at the rule's levels", comparison
    if worse.mean < floor:
        return NOTHING_LEARNED, reason + f"; {rule.worse} stays below the floor {floor:.3g}", comparison
    if comparison.p_equivalent(margin) < rule.alpha:
        return DOES_NOT_HOLD, reason + f"; the difference is shown to be under {margin:g}", comparison
    return INCONCLUSIVE, reason + f"; neither significant nor shown to be under {margin:g}", comparison


def eos_counted(threshold: float, length: int) -> float:
    """A symbol-accuracy threshold restated for token accuracy over `length` symbols plus the EOS, which
    every model (even one without context) predicts from its position: (length * t + 1) / (length + 1)."""
    return (length * threshold + 1) / (length + 1)


def _verdict(pair: Mapping[str, SeedStats | None], rule: Rule, numbers: str, notes=(), **options) -> Verdict:
    """`judge_pair` on the two settings of `pair` (better first), inconclusive if either is unusable."""
    problem = _usable(**pair)
    if problem:
        return Verdict(INCONCLUSIVE, problem, tuple(notes))
    better, worse = pair.values()
    outcome, reason, _ = judge_pair(better, worse, rule, numbers, **options)
    return Verdict(outcome, reason, tuple(notes))


def attention_verdict(stats: Stats, rule: Rule) -> Verdict:
    """Claim 1: attention full against none on token accuracy, with the rule's levels (without at the
    per-position level, with near perfect)."""
    on = select(stats, {"model.attention": "full"})
    off = select(stats, {"model.attention": "none"})
    numbers = (
        f"token accuracy with attention {on.text() if on else 'n/a'}, without {off.text() if off else 'n/a'}"
    )
    return _verdict({"attention=full": on, "attention=none": off}, rule, numbers)


def steps_text(found: tuple[int | None, ...]) -> str:
    """`1320 ± 76 (3 of 3 reached)`: the steps of the seeds that reached a target, and how many did."""
    reached = [float(step) for step in found if step is not None]
    if not found:
        return "n/a"
    text = SeedStats(tuple(reached)).text(0) if reached else "never"
    return f"{text} ({len(reached)} of {len(found)} reached)"


def ffn_verdict(
    stats: Stats, rule: Rule, steps: Mapping[Setting, tuple[int | None, ...]] | None = None
) -> Verdict:
    """Claim 2, restated: the FFN adds per-token memory. One layer on the lookup table, FFN on against
    off; the notes give the nuance: how fast each memorises, modular addition, and a 2-layer
    attention-only model on the table."""
    one = {"model.num_encoder_layers": 1}
    with_ffn = select(stats, {"data": "lookup", "model.ffn": True, **one})
    without = select(stats, {"data": "lookup", "model.ffn": False, **one})
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
            f"(difference {add_on.mean - add_off.mean:.3f}, not tested)"
        )
    deep = select(stats, {"data": "lookup", "model.ffn": False, "model.num_encoder_layers": 2})
    if deep and deep.n:
        notes.append(f"lookup, 2 layers, attention only: {deep.text()} (not tested)")
    numbers = (
        f"lookup facts recalled, 1 layer: FFN on {with_ffn.text() if with_ffn else 'n/a'}, "
        f"off {without.text() if without else 'n/a'}"
    )
    pair = {"lookup, 1 layer, FFN on": with_ffn, "lookup, 1 layer, FFN off": without}
    return _verdict(pair, rule, numbers, notes)


def residual_verdict(stats: Stats, rule: Rule) -> Verdict:
    """Claim 3. At the deepest depth swept, post-LN, with the Add against without; the notes give every
    depth and norm."""
    depths = sorted({value_of(setting, "model.num_encoder_layers") for setting in stats} - {None})
    if not depths:
        return Verdict(INCONCLUSIVE, "no runs with model.num_encoder_layers")
    deepest = depths[-1]
    pick = {"model.num_encoder_layers": deepest, "model.norm": "post"}
    on = select(stats, {**pick, "model.residual": True})
    off = select(stats, {**pick, "model.residual": False})
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
            notes.append(f"norm={norm}, with vs without the Add, by depth (not tested): " + "; ".join(cells))
    numbers = (
        f"{deepest} layers, post-LN: with the Add {on.text() if on else 'n/a'}, "
        f"without {off.text() if off else 'n/a'}"
    )
    return _verdict(
        {f"{deepest} layers with the Add": on, f"{deepest} layers without": off}, rule, numbers, notes
    )


def norm_verdict(stats: Stats, rule: Rule) -> Verdict:
    """Claim 4 (Xiong et al. 2020). At the largest learning rate swept: (a) without warm-up pre-LN beats
    post-LN, and (b) warm-up (the longest swept) rescues post-LN. Holds if both hold; does not hold if
    either is shown absent by its TOST, the two TOSTs Holm-corrected together; inconclusive (nothing
    learned) when a half that could decide it compares arms below the floor. The notes say at which
    learning rates (a) and (b) show."""
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
    halves = {
        "a": judge_pair(
            pre_cold,
            post_cold,
            replace(rule, better="pre-LN", worse="post-LN"),
            f"(a) lr {top} without warm-up: pre-LN {pre_cold.text()}, post-LN {post_cold.text()}",
        ),
        "b": judge_pair(
            post_warm,
            post_cold,
            replace(rule, better=f"post-LN warm-up {longest}", worse="post-LN without warm-up"),
            f"(b) lr {top}, post-LN: warm-up {longest} {post_warm.text()}, none {post_cold.text()}",
        ),
    }
    outcomes = {half: outcome for half, (outcome, _, _) in halves.items()}
    reason = " | ".join(f"{text} -> {outcomes[half]}" for half, (_, text, _) in halves.items())
    # the halves that could be shown absent (both arms learned), their TOSTs corrected together
    open_halves = [half for half, outcome in outcomes.items() if outcome in (DOES_NOT_HOLD, INCONCLUSIVE)]
    tost = [halves[half][2].p_equivalent(rule.margin) for half in open_halves]
    corrected = dict(zip(open_halves, holm(tost), strict=True))
    if corrected:
        reason += "; Holm over the TOSTs: " + ", ".join(f"({h}) p {p:.2g}" for h, p in corrected.items())
    notes = _norm_notes(stats, rates, longest)
    if all(outcome == HOLDS for outcome in outcomes.values()):
        return Verdict(HOLDS, reason, notes)
    if any(p < rule.alpha for p in corrected.values()):
        return Verdict(DOES_NOT_HOLD, reason + f"; a half is shown absent (under {rule.margin:g})", notes)
    if NOTHING_LEARNED in outcomes.values():
        return Verdict(NOTHING_LEARNED, reason + "; the claim needs both halves", notes)
    return Verdict(INCONCLUSIVE, reason + "; neither both halves shown nor one shown absent", notes)


def _norm_notes(stats: Stats, rates: list, longest: int) -> tuple[str, ...]:
    """At which learning rates each half shows (one-sided Welch, uncorrected: a description, not a test
    of the claim), and the diverged runs by norm."""
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
                comparison = compare(*pair)
                answer = "shows" if comparison.real else "not shown"
                shows.append(f"{rate}: {answer} ({pair[0].text()} vs {pair[1].text()}, p {comparison.p:.2g})")
        if shows:
            notes.append(f"{label}, by learning rate (uncorrected): " + "; ".join(shows))
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
    return tuple(notes)


def heads_verdict(
    accuracy: Stats,
    steps: Mapping[Setting, tuple[int | None, ...]],
    rule: Rule,
    target: float,
    steps_per_epoch: int = 1,
) -> Verdict:
    """Claim 5 (Vaswani et al. 2017, Table 3 row A). 4 heads against 1: when both reach `target` token
    accuracy on every seed, fewer steps to it (read once per epoch, so compared at `steps_per_epoch`
    steps, the margin `rule.steps_margin_epochs` epochs), else the higher final accuracy."""
    one, four = select(accuracy, {"model.num_heads": 1}), select(accuracy, {"model.num_heads": 4})
    problem = _usable(**{"1 head": one, "4 heads": four})
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    one_steps = select(steps, {"model.num_heads": 1}) or ()
    four_steps = select(steps, {"model.num_heads": 4}) or ()
    reached = all(s is not None for s in (*one_steps, *four_steps)) and one_steps and four_steps
    if reached:
        slow, fast = SeedStats(tuple(map(float, one_steps))), SeedStats(tuple(map(float, four_steps)))
        # 1 head's steps minus 4 heads': positive when 4 heads are faster; both reached, so both learned
        numbers = (
            f"both reach {target} on every seed; steps to {target}: 1 head {slow.text(0)}, 4 heads "
            f"{fast.text(0)} (read once per epoch of {steps_per_epoch} steps); 1 head minus 4 heads"
        )
        steps_rule = replace(
            rule, better="1 head's steps", worse="4 heads' steps", better_at_least=None, min_gap=0.0
        )
        outcome, reason, _ = judge_pair(
            slow,
            fast,
            steps_rule,
            numbers,
            margin=float(rule.steps_margin_epochs * steps_per_epoch),
            resolution=float(steps_per_epoch),
            floor=float("-inf"),
            digits=0,
        )
        return Verdict(outcome, reason)
    numbers = f"token accuracy: 4 heads {four.text()}, 1 head {one.text()}"
    return _verdict({"4 heads": four, "1 head": one}, rule, numbers)


CHRF_RESOLUTION = 0.01  # chrF and BLEU are 0-100 scores read to 2 decimals


def heads_text_verdict(chrf: Stats, rule: Rule, bleu: Stats | None = None) -> Verdict:
    """Claim 5 on real text: 8 heads against 1 on validation chrF, BLEU beside; the notes compare 32
    heads with 8 and with 1 (two-sided Welch, Holm over the two: reported, not judged)."""
    heads = {count: select(chrf, {"model.num_heads": count}) for count in (1, 8, 32)}

    def bleu_text(count: int) -> str:
        side = select(bleu, {"model.num_heads": count}) if bleu else None
        return f" (BLEU {side.text(2)})" if side else ""

    def shown(count: int) -> str:
        side = heads[count]
        return f"{side.text(2)}{bleu_text(count)}" if side else "n/a"

    notes = []
    if heads[32] is not None and heads[32].n >= 2 and all(heads[c] and heads[c].n >= 2 for c in (1, 8)):
        against = {worse: compare(heads[32], heads[worse], CHRF_RESOLUTION) for worse in (8, 1)}
        corrected = holm([test.test.p_two_sided for test in against.values()])
        for (worse, test), p_holm in zip(against.items(), corrected, strict=True):
            answer = (
                ("higher" if test.difference > 0 else "lower")
                if p_holm < rule.alpha
                else "no difference shown"
            )
            notes.append(
                f"32 heads against {worse}: {answer} (Welch two-sided, Holm over the two: p {p_holm:.2g}); "
                f"32 heads {shown(32)}, {worse} {shown(worse)}; difference {test.test.interval_text(2)} "
                f"(95 % interval, uncorrected; Hedges g {test.test.hedges_g:.3g})"
            )
        notes.append("the paper: 32 heads 25.4 BLEU, 0.4 short of 8 heads (dev set, newstest2013)")
    numbers = f"validation chrF 8 heads {shown(8)}, 1 head {shown(1)}; 8 minus 1"
    return _verdict(
        {"8 heads": heads[8], "1 head": heads[1]}, rule, numbers, notes, resolution=CHRF_RESOLUTION, digits=2
    )
