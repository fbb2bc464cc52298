"""The end of a completed run: every figure summary.json reports about the trained model, and how long
it took, since the evaluation is part of what a preset's minutes buy."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tx_keras.data import Task
from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.evaluation.corpus_scores import corpus_scores
from tx_keras.evaluation.exact_match import exact_match
from tx_keras.evaluation.length_penalty_choice import AUTO, LengthPenaltyChoice, choose_length_penalty
from tx_keras.evaluation.sorted_decoding import decode_sorted
from tx_keras.export.export_config import ExportConfig
from tx_keras.models import Transformer
from tx_keras.run_folder.atomic_write import write_text
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced

TRANSLATIONS = "translations"  # run_dir/translations/test_<decoder>.tsv: source, reference, hypothesis
TRANSLATIONS_HEADER = ("source", "reference", "hypothesis")
GREEDY_BATCH = 512  # sentences per greedy batch: length-sorted, so large batches waste few steps
BEAM_BATCH = 128  # sentences per beam batch (x beam width rows)


@dataclass(frozen=True)
class RunEvaluation:
    """The metrics, the length penalty the export must use, how it was chosen (auto only), the minutes."""

    metrics: dict[str, float]
    length_penalty: float
    choice: LengthPenaltyChoice | None = None
    minutes: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        """The summary.json fields besides the metrics."""
        fields: dict[str, Any] = {"evaluation_minutes": round(self.minutes, 4), **self.notes}
        if self.choice is not None:
            fields["length_penalty"] = self.choice.record()
        return fields


def _teacher_forced(model: Transformer, split: str, batches: Callable[[str], Any]) -> dict[str, float]:
    """Per-token loss and accuracy of `split` with the reference prefix fed in (the logged figures)."""
    with epoch_end_warning_silenced():  # bucketed batches: a dataset of unknown length ends normally
        logs = model.evaluate(batches(split), verbose=0, return_dict=True)
    return {f"{split}_loss": float(logs["loss"]), f"{split}_accuracy": float(logs["accuracy"])}


def _scores(task: Task, split: str, predicted: np.ndarray, suffix: str) -> tuple[dict[str, float], list[str]]:
    """Corpus BLEU/chrF of decoded ids against the split's reference texts, and the hypotheses."""
    hypotheses = task.detokenize_targets(predicted)
    references = [reference for _, reference in task.texts(split)]
    scores = corpus_scores(hypotheses, references)
    return {f"{split}_{name}{suffix}": value for name, value in scores.items()}, hypotheses


def write_translations(
    path: Path, sources: Sequence[str], references: Sequence[str], hypotheses: Sequence[str]
) -> None:
    """The test translations as a TSV in the run folder, one line per sentence with a header: BLEU and
    chrF are one number each, a user judges a model (and finds what costs points) by reading its sentences
    next to the references. The texts are normalized corpus lines and decoder output: no tabs or
    newlines."""
    rows = zip(sources, references, hypotheses, strict=True)
    write_text(path, "".join("\t".join(row) + "\n" for row in (TRANSLATIONS_HEADER, *rows)))


def _write(run_dir: Path, task: Task, name: str, hypotheses: list[str]) -> None:
    sources, references = zip(*task.texts("test"), strict=True)
    write_translations(run_dir / TRANSLATIONS / f"test_{name}.tsv", sources, references, hypotheses)


def evaluate_run(
    model: Transformer,
    task: Task,
    greedy: Callable,
    batches: Callable[[str], Any],
    export: ExportConfig,
    run_dir: Path,
) -> RunEvaluation:
    """Teacher-forced loss/accuracy (on `batches(split)`, the batches fit's validation reads: padded for
    the replicas under data parallelism) and greedy exact-match on validation and test; for real text also
    corpus BLEU and chrF, greedy and (beam width > 1) beam, with the test translations in
    run_dir/translations/test_<decoder>.tsv. With `export.evaluate_test` false, validation only.

    Beam search runs only where a figure needs it: with `export.length_penalty=auto` the validation split
    once per alpha of `export.length_penalty_grid` (the best validation chrF wins), then the test split
    once, with that alpha; with a fixed penalty only the test split. Test never informs a choice.
    """
    started = time.perf_counter()
    metrics: dict[str, float] = {}
    max_length = task.target_length - 1
    splits = ("validation", "test") if export.evaluate_test else ("validation",)
    for split in splits:
        metrics.update(_teacher_forced(model, split, batches))
        source, target = task.splits[split]
        predicted = decode_sorted(greedy, source, GREEDY_BATCH)
        metrics[f"{split}_exact_match"] = exact_match(predicted, target, task.target_vocab)
        if task.is_text:
            scores, hypotheses = _scores(task, split, predicted, "")
            metrics.update(scores)
            if split == "test":
                _write(run_dir, task, "greedy", hypotheses)
    width, penalty = export.beam_width, export.length_penalty
    if not task.is_text or width == 1:  # greedy serves; the penalty changes nothing at width 1
        alpha = 0.0 if penalty == AUTO else float(penalty)
        notes = {"length_penalty": {"chosen": alpha, "chosen_by": "not searched: greedy decoding"}}
        minutes = (time.perf_counter() - started) / 60
        return RunEvaluation(metrics, alpha, None, minutes, notes if penalty == AUTO else {})

    def beam(split: str, alpha: float) -> tuple[dict[str, float], list[str]]:
        decode = beam_search_decoder(model, max_length, width, alpha)
        return _scores(task, split, decode_sorted(decode, task.splits[split][0], BEAM_BATCH), "_beam")

    choice = None
    if penalty == AUTO:
        validation = {}

        def chrf(alpha: float) -> float:
            validation[alpha] = beam("validation", alpha)[0]
            return validation[alpha]["validation_chrf_beam"]

        choice = choose_length_penalty(export.length_penalty_grid, chrf, width)
        alpha = choice.chosen
        metrics.update(validation[alpha])
    else:
        alpha = float(penalty)
    if export.evaluate_test:
        scores, hypotheses = beam("test", alpha)
        metrics.update(scores)
        _write(run_dir, task, "beam", hypotheses)
    return RunEvaluation(metrics, alpha, choice, (time.perf_counter() - started) / 60)
