"""The claims of the lecture that the suite tests: each one's question, its sweep, its metric and its
rule, all stated here before any run (the rules themselves are the functions of `verdicts.py`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tx_keras.claims.event_scalars import steps_per_epoch
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting
from tx_keras.claims.verdicts import (
    Verdict,
    attention_verdict,
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
    rule: str
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
            rule=(
                "holds if without attention the validation token accuracy is <= 0.08 of the symbols and with "
                "attention >= 0.95 (restated with the EOS counted, which a per-position predictor always "
                "gets: (12 t + 1) / 13, i.e. <= 0.151 and >= 0.954) and attention is better (Welch "
                "one-sided p < 0.05); does not hold if TOST (p < 0.05) shows attention's gain under 0.05; "
                "else inconclusive, also when even attention stays at the per-position level (nothing "
                "learned the task)"
            ),
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.attention",),
            judge=lambda evidence: attention_verdict(
                evidence.stats, int(evidence.config.get("data", {}).get("length", 12))
            ),
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
            rule=(
                "holds if on the lookup table one layer with the FFN recalls more facts than without (Welch "
                "one-sided p < 0.05) and by >= 0.10; does not hold if TOST (p < 0.05) shows the difference "
                "under 0.10; else inconclusive, also when no setting recalls 0.10 of the facts. Modular "
                "addition and the 2-layer attention-only model are reported as the nuance, not judged, "
                "with the steps each needs to reach 0.995 token accuracy (0.99 of the facts, the EOS "
                "counted)"
            ),
            metric="validation_exact_match",
            metric_label="facts recalled (validation exact-match)",
            knobs=("data", "model.num_encoder_layers", "model.ffn"),
            judge=lambda evidence: ffn_verdict(evidence.stats, evidence.steps),
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
            rule=(
                "at the deepest depth with post-LN: holds if with the Add the token accuracy is >= 0.90 and "
                "beats the model without it (Welch one-sided p < 0.05) by >= 0.30; does not hold if TOST "
                "(p < 0.05) shows the difference under 0.30; else inconclusive, also when no setting beats "
                "a per-position predictor (0.151)"
            ),
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.num_encoder_layers", "model.norm", "model.residual"),
            judge=lambda evidence: residual_verdict(evidence.stats),
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
            rule=(
                "at the largest learning rate: (a) without warm-up pre-LN beats post-LN and (b) with "
                "warm-up post-LN beats post-LN without it (each Welch one-sided p < 0.05); holds if both, "
                "does not hold if TOST (p < 0.05) shows either half under 0.10 token accuracy, else "
                "inconclusive"
            ),
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.norm", "trainer.learning_rate", "trainer.warmup_steps"),
            judge=lambda evidence: norm_verdict(evidence.stats),
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
                "training steps to 0.99 of it."
            ),
            rule=(
                "4 heads against 1: if both reach 0.99 on every seed, the fewer steps to 0.99 (read once "
                "per epoch: compared at one epoch of steps), else the higher accuracy; holds if 4 heads win "
                "at Welch one-sided p < 0.05, does not hold if TOST (p < 0.05) shows the difference under 2 "
                "epochs of steps or 0.02 token accuracy, else inconclusive; inconclusive too if no head "
                "count reaches 0.5 (nothing left the recall plateau)"
            ),
            metric="validation_accuracy",
            metric_label="validation token accuracy",
            knobs=("model.num_heads",),
            judge=lambda evidence: heads_verdict(
                evidence.stats, evidence.steps, steps_per_epoch=steps_per_epoch(evidence.config)
            ),
            steps_to=0.99,
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
            rule=(
                "8 heads against 1 on validation chrF: holds if 8 heads score higher (Welch one-sided "
                "p < 0.05), does not hold if TOST (p < 0.05) shows the difference under 1 chrF, else "
                "inconclusive, and inconclusive when no head count reaches 20 chrF (every degenerate output "
                "measured on the corpus scores below: the source copied 13.4, a fixed sentence <= 8.2). "
                "32 heads against 8 and 1 reported beside, not judged"
            ),
            metric="validation_chrf",
            metric_label="validation chrF (greedy)",
            knobs=("model.num_heads",),
            judge=lambda evidence: heads_text_verdict(evidence.stats, evidence.beside),
            beside="validation_bleu",
            final=("head_divergence", "focused_heads"),
            arguments="data.path=FILE",
        ),
    )
}
