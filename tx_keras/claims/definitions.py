"""The claims of the lecture that the suite tests: each one's question, its sweep, its metric and its rule
(`Rule`: every threshold, the margin's reason, the date it was set and its earlier forms), in one place;
`verdicts.py` applies them."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tx_keras.claims.event_scalars import steps_per_epoch
from tx_keras.claims.rule import Rule
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting
from tx_keras.claims.verdicts import (
    Verdict,
    attention_verdict,
    eos_counted,
    ffn_verdict,
    heads_text_verdict,
    heads_verdict,
    norm_verdict,
    residual_verdict,
)


@dataclass(frozen=True)
class Evidence:
    """What a rule may look at: the metric per setting, the steps each seed needed to reach the target
    accuracy (None: never), the sweep's shared config (task length, sizes), and the claim's second metric
    per setting (`Claim.beside`), printed beside the first."""

    stats: Mapping[Setting, SeedStats]
    steps: Mapping[Setting, tuple[int | None, ...]] = field(default_factory=dict)
    config: Mapping = field(default_factory=dict)
    beside: Mapping[Setting, SeedStats] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One claim: `tx-train sweep=claim_<name>` runs it, `tx-claims` judges it with `judge`.

    `knobs` are the swept keys besides the seed, in display order; `arguments`: what the sweep needs on
    the command line besides its name (a corpus path), shown in the report's command; `diagnostics`:
    plot the gradient norm and the rank-collapse ratio per layer at initialisation, one line per value of
    these knobs (at the deepest depth swept; settings that differ otherwise are averaged, as the values
    at initialisation do not depend on the learning rate); `steps_to`: also read each run's validation
    accuracy curve for the steps to this accuracy; `beside`: a second metric the rule prints next to
    `metric`; `final`: per-layer diagnostics (`layers/<prefix>/<kind>/layer_i`) whose last logged values
    the report tabulates per setting, mean over seeds.
    """

    name: str
    title: str
    question: str
    measures: str
    rule: Rule
    metric: str
    metric_label: str
    knobs: tuple[str, ...]
    judge: Callable[[Evidence], Verdict]
    diagnostics: tuple[str, ...] = ()
    steps_to: float | None = None
    beside: str | None = None
    final: tuple[str, ...] = ()
    arguments: str = ""

    @property
    def sweep(self) -> str:
        return f"claim_{self.name}"


# This form of every rule: set by the issue-64 commit (docs/claims.md names it), after every recorded run.
SET_ON = datetime.date(2026, 12, 6)
SET_IN = "issue 64: per-pair floor, Holm over TOSTs, power beside every test"
PER_POSITION = eos_counted(0.08, 12)  # 0.151: a per-position predictor on reverse/sort of 12, EOS counted
PER_POSITION_REASON = (
    "a per-position predictor's level on 12 symbols, 0.08 of them with the EOS counted: (12 x 0.08 + 1) / 13"
)


def set_now(**fields) -> Rule:
    """A rule in the form set by SET_IN on SET_ON (every rule of today shares that change)."""
    return Rule(set_on=SET_ON, set_in=SET_IN, **fields)


FIRST_RULES = "61c5963 (code) and 5cf5c64 (docs), before its runs: real above 2 pooled sd"
WELCH_RULES = "1b665c7, after its runs: Welch two-sided p < 0.05 plus the sign, sweep-wide floor"
TOST_RULES = "c1fe982, after its runs: Welch one-sided; TOST against a margin"

ATTENTION = set_now(
    metric="validation token accuracy",
    better="attention",
    worse="no attention",
    better_at_least=eos_counted(0.95, 12),
    worse_at_most=PER_POSITION,
    margin=0.05,
    margin_reason=(
        "two-thirds of one target token of the 13 per sequence (1/13 = 0.077): a context effect smaller "
        "than one symbol per sequence; set in c1fe982 after the runs"
    ),
    floor=PER_POSITION,
    floor_reason=PER_POSITION_REASON,
    history=f"{FIRST_RULES}, with the levels <= 0.151 and >= 0.954; {WELCH_RULES}; {TOST_RULES}",
)
FFN = set_now(
    metric="share of the 841 facts recalled (validation exact-match), 1 layer, lookup table",
    better="FFN on",
    worse="FFN off",
    min_gap=0.10,
    margin=0.10,
    margin_reason=(
        "0.10 of the facts (84 of 841), a third of the pilot's gap (0.68-0.71 without against 0.99-1.00 "
        "with); the smallest gap that counts since 5cf5c64 (before the runs), the TOST margin since c1fe982"
    ),
    floor=0.10,
    floor_reason="a tenth of the facts; chance is 1/29 = 0.034",
    history=f"{FIRST_RULES}, and >= 0.10; {WELCH_RULES}; {TOST_RULES}",
)
RESIDUAL = set_now(
    metric="validation token accuracy at the deepest depth, post-LN",
    better="with the Add",
    worse="without the Add",
    better_at_least=0.90,
    min_gap=0.30,
    margin=0.30,
    margin_reason=(
        "under 40 % of the pilot's gap (0.999 with against 0.18 without at 8 layers); the smallest gap "
        "that counts since 5cf5c64 (before the runs), the TOST margin since c1fe982"
    ),
    floor=PER_POSITION,
    floor_reason=PER_POSITION_REASON,
    history=f"{FIRST_RULES}, with >= 0.90 and >= 0.30; {WELCH_RULES}; {TOST_RULES}",
)
NORM = set_now(
    metric="validation token accuracy at the largest learning rate",
    better="the claimed winner",
    worse="the claimed loser",
    margin=0.10,
    margin_reason=(
        "a fifth of the pilot's gap (pre-LN 0.56 against post-LN 0.06 at lr 1e-2, no warm-up); set in "
        "c1fe982 after the runs"
    ),
    floor=PER_POSITION,
    floor_reason=PER_POSITION_REASON,
    history=f"{FIRST_RULES}: holds if both halves, does not hold if neither, inconclusive if one; "
    f"{WELCH_RULES}; {TOST_RULES}, does not hold if either half shown absent (uncorrected)",
)
HEADS_TARGET = 0.99  # token accuracy whose steps the heads rule compares when both arms reach it
HEADS = set_now(
    metric="validation token accuracy",
    better="4 heads",
    worse="1 head",
    margin=0.02,
    margin_reason=(
        "a third of one of the 18 target tokens per sequence (1/18 = 0.056); for steps, 2 epochs: two "
        "readings of a curve read once per epoch; both set in c1fe982 after the runs"
    ),
    steps_margin_epochs=2,
    floor=0.5,
    floor_reason="half the answers right: far above the recall plateau (~0.2), far below a solved task",
    history=f"{FIRST_RULES}: holds if 4 heads win, else 'does not hold at this scale', which its own "
    f"caveat read as 'no head count learned the task'; {WELCH_RULES}; {TOST_RULES}",
)
HEADS_TEXT = set_now(
    metric="validation chrF (greedy)",
    better="8 heads",
    worse="1 head",
    margin=1.0,
    margin_reason=(
        "about the paper's own effect (8 heads 0.9 BLEU above 1): a gain under it is no practical gain; "
        "set in c1fe982 after the runs"
    ),
    floor=20.0,
    floor_reason=(
        "every degenerate output scores below it on Tatoeba eng-fra: the source copied 13.4, one fixed "
        "sentence <= 8.2; the trained preset 56-58"
    ),
    history="21e5693, before its runs: holds at Welch two-sided p < 0.05 (8 higher), does not "
    f"hold if 1 head higher at p < 0.05, floor 20 chrF; {TOST_RULES}",
)


CLAIMS: dict[str, Claim] = {
    claim.name: claim
    for claim in (
        Claim(
            name="attention",
            title="Attention gives context",
            question="Does a model need attention to use the other positions of its input?",
            measures=(
                "Reverse 12 symbols of 16; 2 + 2 layers, d_model 64, 4 heads, pre-LN; `model.attention` full "
                "vs none (each position reads only itself, FFN kept): without context only a per-position "
                "predictor is possible, about 1/16 of the symbols."
            ),
            rule=ATTENTION,
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.attention",),
            judge=lambda evidence: attention_verdict(evidence.stats, ATTENTION),
        ),
        Claim(
            name="ffn",
            title='"Without the FFN the model is only linear weighting"',
            question=(
                "What does the FFN add? The wording is inexact (softmax and LayerNorm are non-linear); the "
                "testable form is that the FFN adds per-token memory (a key-value store, Geva et al. 2021)."
            ),
            measures=(
                "A random lookup table over pairs mod 29 (841 facts, memorised: trained on all, evaluated on "
                "all) and modular addition mod 29; 1 + 1 layers, d_model 64, FFN on/off, plus 2 + 2 layers "
                "(attention-only control). Metric: exact-match = share of facts recalled."
            ),
            rule=FFN,
            metric="validation_exact_match",
            metric_label="facts recalled (validation exact-match)",
            knobs=("data", "model.num_encoder_layers", "model.ffn"),
            judge=lambda evidence: ffn_verdict(evidence.stats, FFN, evidence.steps),
            steps_to=0.995,  # token accuracy with the EOS counted: 0.99 of the facts
        ),
        Claim(
            name="residual",
            title="Add (residual) lets deep stacks train",
            question="Do deep stacks train without residual connections, and why not?",
            measures=(
                "Sort 12 symbols of 16; depth 2, 4, 8 (encoder and decoder alike) x residual on/off x "
                "{post-LN, no norm}; d_model 64, 4 heads. The diagnostics at initialisation show why: the "
                "gradient norm per layer and the rank-collapse ratio r_l = ||H_l - 1 mu_l^T||_{1,inf} / "
                "||H_l||_{1,inf} (Dong et al. 2021), 0 when all tokens are the same vector."
            ),
            rule=RESIDUAL,
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.num_encoder_layers", "model.norm", "model.residual"),
            judge=lambda evidence: residual_verdict(evidence.stats, RESIDUAL),
            diagnostics=("model.norm", "model.residual"),
        ),
        Claim(
            name="norm",
            title="Norm stabilises training",
            question=("Does post-LN need learning-rate warm-up where pre-LN does not (Xiong et al. 2020)?"),
            measures=(
                "Sort 12 symbols of 16; 4 + 4 layers, d_model 128; {post-LN, pre-LN, none} x constant "
                "learning rate {1e-3, 3e-3, 1e-2} x linear warm-up {0, 300} steps."
            ),
            rule=NORM,
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.norm", "trainer.learning_rate", "trainer.warmup_steps"),
            judge=lambda evidence: norm_verdict(evidence.stats, NORM),
        ),
        Claim(
            name="heads",
            title="Several heads beat one",
            question=(
                "Do several heads beat one head of the same total width (Vaswani et al. 2017, Table 3 row A: "
                "1 head 24.9 BLEU, 8 heads 25.8)?"
            ),
            measures=(
                "Multi-query associative recall (8-16 key-value pairs, 16 queries, about 64 tokens); 2 + 2 "
                "layers, d_model 64, 1, 2, 4, 8, 16 heads. Metrics: validation token accuracy and the "
                f"training steps to {HEADS_TARGET} of it."
            ),
            rule=HEADS,
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.num_heads",),
            judge=lambda evidence: heads_verdict(
                evidence.stats,
                evidence.steps,
                HEADS,
                HEADS_TARGET,
                steps_per_epoch=steps_per_epoch(evidence.config),
            ),
            steps_to=HEADS_TARGET,
        ),
        Claim(
            name="heads_text",
            title="Several heads beat one, on real text",
            question=(
                "Do several heads beat one head of the same total width where the paper tested it, on real "
                "translation (Vaswani et al. 2017, Table 3 row A: 1 head 24.9 BLEU, 8 heads 25.8, 32 heads "
                "25.4)? And what do the heads do: does one head spread its attention where eight split it?"
            ),
            measures=(
                "English -> French (`data.path`, the Tatoeba pairs), the tatoeba_small model (2 + 2 layers, "
                "d_model 256) with 1, 8 and 32 heads (d_k 256, 32, 8), 3 training seeds on one fixed split, "
                "6 training minutes each (sweeps/sweep/claim_heads_text.yaml). Metric: greedy validation "
                "chrF, BLEU beside; test is never read. Diagnostics on 32 validation probes at the end of "
                "training: mean pairwise Jensen-Shannon divergence between heads (bits, 0 for one head) and "
                "the share of heads mostly on one position; head importance per run (head_importance.md)."
            ),
            rule=HEADS_TEXT,
            metric="validation_chrf",
            metric_label="validation chrF (greedy)",
            knobs=("model.num_heads",),
            judge=lambda evidence: heads_text_verdict(evidence.stats, HEADS_TEXT, evidence.beside),
            beside="validation_bleu",
            final=("head_divergence", "focused_heads"),
            arguments="data.path=FILE",
        ),
    )
}
