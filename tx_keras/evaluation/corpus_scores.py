"""Corpus BLEU and chrF with sacrebleu's defaults, the figures papers and the issue anchors report."""

from __future__ import annotations

import sacrebleu


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """{"bleu", "chrf"} on detokenized text: BLEU cased with the 13a tokenizer, chrF with character
    6-grams, both 0-100. Each hypothesis has one reference (a source with several translations in the
    corpus appears once per translation)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    if not references:
        return {"bleu": 0.0, "chrf": 0.0}
    return {
        "bleu": float(sacrebleu.corpus_bleu(hypotheses, [references]).score),
        "chrf": float(sacrebleu.corpus_chrf(hypotheses, [references]).score),
    }
