"""The verdict rules, as pure functions of the per-setting results: fixed before any sweep ran, never tuned.

Every rule compares means over seeds and calls a difference real only when Welch's t-test over seeds gives
p < 0.05 in the claimed direction (`welch_test.py`; Hedges' g printed beside it). A rule whose settings are
missing or have fewer than 2 usable seeds is inconclusive, and so is a sweep in which no setting learned
the task at all (every setting below the claim's own `floor`): then the comparison the claim asks for
never happened. The numbers a verdict rests on are in its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting, select, value_of
from tx_keras.claims.welch_test import RESOLUTION, Comparison, welch

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"

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
    stats: Stats, length: int, off_at_most: float = 0.08, on_at_least: float = 0.95
) -> Verdict:
    """Claim 1. Holds if without attention the token accuracy stays at the per-position level
    (<= `off_at_most` of the symbols) and with attention it reaches `on_at_least`; both thresholds are
    restated with the always-predictable EOS counted (`eos_counted`). Does not hold if the model without
    attention beats that level, or attention is not better (Welch p < 0.05); otherwise inconclusive, and
    inconclusive too when even attention stays at the per-position level (nothing learned the task)."""
    on = select(stats, {"model.attention": "full"})
    off = select(stats, {"model.attention": "none"})
    low, high = eos_counted(off_at_most, length), eos_counted(on_at_least, length)
    comparison = _judged(stats, {"attention=full": on, "attention=none": off}, low, "token accuracy")
    if isinstance(comparison, Verdict):
        return comparison
    numbers = (
        f"token accuracy with attention {on.text()}, without {off.text()} (rule: without <= {low:.3f}, "
        f"with >= {high:.3f}, i.e. {off_at_most} and {on_at_least} of the {length} symbols, EOS counted); "
        f"{comparison.text()}"
    )
    if off.mean <= low and on.mean >= high and comparison.real:
        return Verdict(HOLDS, numbers)
    if off.mean > low or not comparison.real:
        return Verdict(DOES_NOT_HOLD, numbers)
    return Verdict(INCONCLUSIVE, numbers + "; attention helps but did not reach the threshold")


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
    the FFN recalls more facts than without (Welch p < 0.05) and by at least `min_gap`; does not hold if
    it is not significantly more; otherwise inconclusive, and inconclusive when no setting recalls even
    `floor` of the facts (chance is 1/29 = 0.034: nothing learned the table). The notes give the
    nuance: how fast each memorises (`steps` to the target accuracy), modular addition with and without
    the FFN, and a 2-layer attention-only model on the table."""
    one = {"model.num_encoder_layers": 1}
    with_ffn = select(stats, {"data": "lookup", "model.ffn": True, **one})
    without = select(stats, {"data": "lookup", "model.ffn": False, **one})
    pair = {"lookup, 1 layer, FFN on": with_ffn, "lookup, 1 layer, FFN off": without}
    comparison = _judged(stats, pair, floor, "share of facts recalled")
    if isinstance(comparison, Verdict):
        return comparison
    gap = comparison.difference
    numbers = (
        f"lookup facts recalled, 1 layer: FFN on {with_ffn.text()}, off {without.text()}; "
        f"{comparison.text()} (rule: p < 0.05 and >= {min_gap})"
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
    if comparison.real and gap >= min_gap:
        return Verdict(HOLDS, numbers, tuple(notes))
    if not comparison.real:
        return Verdict(DOES_NOT_HOLD, numbers, tuple(notes))
    return Verdict(INCONCLUSIVE, numbers + f"; the difference is real but under {min_gap}", tuple(notes))


def residual_verdict(
    stats: Stats, on_at_least: float = 0.90, min_gap: float = 0.30, floor: float = eos_counted(0.08, 12)
) -> Verdict:
    """Claim 3. At the deepest depth swept, post-LN: holds if with the Add the model reaches
    `on_at_least` token accuracy and beats the model without it (Welch p < 0.05) by at least `min_gap`;
    does not hold if the Add is not significantly better; otherwise inconclusive, and inconclusive when no
    setting beats `floor`, a per-position predictor's level on sort (0.08 of the 12 symbols, EOS counted).
    The notes give every depth and norm."""
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
        f"{deepest} layers, post-LN: with the Add {on.text()}, without {off.text()}; {comparison.text()} "
        f"(rule: with >= {on_at_least}, p < 0.05 and a difference >= {min_gap})"
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
    if on.mean >= on_at_least and comparison.real and gap >= min_gap:
        return Verdict(HOLDS, numbers, tuple(notes))
    if not comparison.real:
        return Verdict(DOES_NOT_HOLD, numbers, tuple(notes))
    return Verdict(INCONCLUSIVE, numbers, tuple(notes))


def norm_verdict(stats: Stats, floor: float = eos_counted(0.08, 12)) -> Verdict:
    """Claim 4 (Xiong et al. 2020). At the largest learning rate swept: (a) without warm-up pre-LN beats
    post-LN (Welch p < 0.05), and (b) warm-up (the longest swept) rescues post-LN: it beats post-LN
    without warm-up (p < 0.05). Holds if both, does not hold if neither, inconclusive if one, and
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
    numbers = (
        f"lr {top}: post-LN without warm-up {post_cold.text()}, pre-LN without warm-up {pre_cold.text()} "
        f"(a: {pre.text()}: {'yes' if first else 'no'}); "
        f"post-LN with {longest} warm-up steps {post_warm.text()} "
        f"(b: {warm.text()}: {'yes' if second else 'no'})"
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
    if not first and not second:
        return Verdict(DOES_NOT_HOLD, numbers, notes)
    return Verdict(INCONCLUSIVE, numbers + "; only one half of the rule shows", notes)


def heads_verdict(
    accuracy: Stats, steps: Mapping[Setting, tuple[int | None, ...]], target: float = 0.99, floor: float = 0.5
) -> Verdict:
    """Claim 5 (Vaswani et al. 2017, Table 3 row A). 4 heads against 1: when both reach `target` token
    accuracy on every seed, the one that gets there in fewer steps (Welch p < 0.05) wins; else the higher
    final accuracy (p < 0.05). Holds if 4 heads win; otherwise it does not hold at this scale. Inconclusive
    when no head count reaches `floor`: half the answers right is far above the recall plateau (~0.2,
    predicting from the values present without finding the queried key), far below a solved task."""
    one, four = select(accuracy, {"model.num_heads": 1}), select(accuracy, {"model.num_heads": 4})
    problem = _usable(**{"1 head": one, "4 heads": four})
    if problem:
        return Verdict(INCONCLUSIVE, problem)
    one_steps = select(steps, {"model.num_heads": 1}) or ()
    four_steps = select(steps, {"model.num_heads": 4}) or ()
    reached = all(s is not None for s in (*one_steps, *four_steps)) and one_steps and four_steps
    if reached:
        slow, fast = SeedStats(tuple(map(float, one_steps))), SeedStats(tuple(map(float, four_steps)))
        comparison = _compare(slow, fast, resolution=1.0)  # steps: resolved to one step
        numbers = (
            f"both reach {target} on every seed; steps to {target}: 1 head {slow.text(0)}, 4 heads "
            f"{fast.text(0)}; 4 heads faster: {comparison.text(0)}"
        )
    else:
        failed = _never_learned(accuracy, floor, "token accuracy")
        if failed:
            return failed
        comparison = _compare(four, one)
        numbers = f"token accuracy: 1 head {one.text()}, 4 heads {four.text()}; {comparison.text()}"
    if comparison.real:
        return Verdict(HOLDS, numbers)
    return Verdict(DOES_NOT_HOLD, numbers + "; not at this scale")


CHRF_RESOLUTION = 0.01  # chrF and BLEU are 0-100 scores read to 2 decimals


def heads_text_verdict(chrf: Stats, bleu: Stats | None = None, floor: float = 20.0) -> Verdict:
    """Claim 5 on real text (Vaswani et al. 2017, Table 3 row A, at the model's fixed width): 8 heads
    against 1 on validation chrF. Holds if 8 heads score higher (Welch p < 0.05); does not hold if 1 head
    scores higher (p < 0.05); inconclusive when the seeds cannot tell the two apart (the smallest
    difference they could have called real is in the reason), and when no head count reaches `floor`
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
            f"{better} minus {worse}: {comparison.text(2)}"
        )
        return comparison, text

    comparison, numbers = compared(8, 1)
    notes = []
    if heads[32] is not None and heads[32].n >= 2:
        for worse in (8, 1):
            against, text = compared(32, worse)
            answer = (
                "higher" if against.real else "lower" if against.p < 0.05 else "no significant difference"
            )
            notes.append(f"32 heads against {worse}: {answer}; {text}")
        notes.append("the paper: 32 heads 25.4 BLEU, 0.4 short of 8 heads (dev set, newstest2013)")
    notes = tuple(notes)
    if comparison.real:
        return Verdict(HOLDS, numbers, notes)
    if comparison.difference < 0 and comparison.p < 0.05:
        return Verdict(DOES_NOT_HOLD, numbers + "; 1 head is better", notes)
    return Verdict(INCONCLUSIVE, numbers + "; the seeds cannot tell 8 heads from 1 at this budget", notes)
