"""The real-text task: a parallel corpus file -> normalised pairs -> split by source -> learned
vocabularies -> padded ids, tokenized inside tf.data."""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.data.corpus_location import cache_folder, resolve_corpus
from tx_keras.data.parallel_corpus import read_parallel_corpus
from tx_keras.data.source_split import split_by_source
from tx_keras.data.task import SPLITS, Task, pad_rows
from tx_keras.data.task_config import ParallelTextConfig
from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.unspaced_script import tokenizer_for
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.data.vocabulary_learning import learn_vocabulary
from tx_keras.data.worker_processes import map_in_processes

log = logging.getLogger(__name__)

_TOKENIZE_BATCH = 2048
_LEARNER = "wordpiece-learner-v2"  # part of the vocabulary cache key: change it when learning changes


def build_parallel_text(config: ParallelTextConfig) -> Task:
    """The keys of `config` are explained in conf/data/parallel_text.yaml (defaults in task_config.py)."""
    path = resolve_corpus(config.path, config.cache_dir, config.sha256)
    reading = read_parallel_corpus(
        path,
        source_column=config.source_column,
        target_column=config.target_column,
        lowercase=config.lowercase,
        max_words=config.max_words,
        member=config.member,
    )
    log.info(reading.report())
    pairs = split_by_source(
        reading.pairs,
        num_validation=config.num_validation,
        num_test=config.num_test,
        seed=config.seed,
        max_pairs=config.max_pairs,
    )
    train_sources = [source for source, _ in pairs["train"]]
    train_targets = [target for _, target in pairs["train"]]
    shared, lowercase = config.shared_vocabulary, config.lowercase
    source_kind, target_kind = tokenizer_kinds(config.tokenizer, shared, train_sources, train_targets)
    source_format, target_format = TextFormat(source_kind, lowercase), TextFormat(target_kind, lowercase)
    size = config.vocab_size
    cache = cache_folder(config.cache_dir) / "vocabularies"
    if shared:
        (source_vocab,) = learned_vocabularies([(train_sources + train_targets, source_format)], size, cache)
        target_vocab = source_vocab
    else:
        source_vocab, target_vocab = learned_vocabularies(
            [(train_sources, source_format), (train_targets, target_format)], size, cache
        )
    source_tokenizer = TextTokenizer(source_vocab, source_format)
    target_tokenizer = TextTokenizer(target_vocab, target_format)
    ids = {
        split: (
            tokenized([s for s, _ in pairs[split]], source_tokenizer),
            tokenized([t for _, t in pairs[split]], target_tokenizer),
        )
        for split in SPLITS
    }
    source_length = 1 + max(len(row) for split in SPLITS for row in ids[split][0])  # + EOS
    target_length = 2 + max(len(row) for split in SPLITS for row in ids[split][1])  # + SOS, EOS
    splits = {
        split: (
            pad_rows([[*row, Vocabulary.EOS] for row in source], source_length),
            pad_rows([[Vocabulary.SOS, *row, Vocabulary.EOS] for row in target], target_length),
        )
        for split, (source, target) in ids.items()
    }
    report = {
        "corpus": reading.name,
        "lines": dict(reading.counts),
        "pairs": {split: len(pairs[split]) for split in SPLITS},
        "tokenizers": {"source": source_kind, "target": target_kind},
        "vocabulary": {"source": len(source_vocab), "target": len(target_vocab)},
        "unknown_target_tokens": {split: unknown_share(splits[split][1]) for split in SPLITS},
    }
    log.info(
        "parallel_text: %s train / %s validation / %s test pairs; vocabularies %d %s + %d %s tokens; "
        "lengths up to %d source and %d target tokens",
        *report["pairs"].values(),
        len(source_vocab),
        source_kind,
        len(target_vocab),
        target_kind,
        source_length,
        target_length,
    )
    return Task(
        "parallel_text", source_vocab, target_vocab, splits, source_format, target_format, pairs, report
    )


def tokenizer_kinds(choice: str, shared: bool, sources: list[str], targets: list[str]) -> tuple[str, str]:
    """(source, target) tokenizer kinds: `choice` for both, or with `auto` characters for a side written
    in an unspaced script and WordPiece otherwise (characters for both when they share a vocabulary
    and either needs them)."""
    if choice != "auto":
        return choice, choice
    kinds = tokenizer_for(sources), tokenizer_for(targets)
    if shared and "characters" in kinds:
        return "characters", "characters"
    return kinds


def unknown_share(ids: np.ndarray) -> float:
    """The share of UNK among a split's real tokens: how much the vocabulary misses."""
    tokens = ids[ids != Vocabulary.PAD]
    return float(np.mean(tokens == Vocabulary.UNK)) if tokens.size else 0.0


def tokenized(texts: list[str], tokenizer: TextTokenizer) -> list[list[int]]:
    """Token ids per text, tokenized in parallel batches by tf.data (order kept)."""
    if not texts:
        return []
    dataset = (
        tf.data.Dataset.from_tensor_slices(texts)
        .batch(_TOKENIZE_BATCH)
        .map(tokenizer.tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    )
    return [row for batch in dataset for row in batch.to_list()]


def learned_vocabularies(
    wanted: list[tuple[list[str], TextFormat]], size: int, cache: Path
) -> list[Vocabulary]:
    """learn_vocabulary for each (texts, format), cached by the texts, format and size: the WordPiece
    learner takes about a minute a language on 170k sentences, and every job of a sweep over the same corpus
    would repeat it. Two WordPiece vocabularies to learn are learned at once, one in a worker process (the
    learner is one Python thread, so one core a language; a worker costs a few seconds to start)."""
    paths = [cache / f"{form.kind}-{size}-{_digest(texts, form, size)}.txt" for texts, form in wanted]
    jobs = [(texts, form, size, path) for (texts, form), path in zip(wanted, paths, strict=True)]
    missing = list({path: job for job, path in zip(jobs, paths, strict=True) if not path.exists()}.values())
    in_workers = missing[:-1] if all(form.kind == "wordpiece" for _, form, _, _ in missing) else []
    started = time.perf_counter()
    for texts, form, _, _ in missing:
        log.info("vocabulary: learning %d %s tokens from %d texts ...", size, form.kind, len(texts))
    if in_workers:
        cache.mkdir(parents=True, exist_ok=True)
        results = map_in_processes(_learned_to_file, in_workers, len(in_workers))
    for job in missing[len(in_workers) :]:
        _learned_to_file(job)
    if in_workers:
        for _ in results:
            pass
    if missing:
        log.info("vocabulary: learned in %.0f s (cached in %s)", time.perf_counter() - started, cache)
    return [Vocabulary.from_file(path) for path in paths]


def _learned_to_file(job: tuple[list[str], TextFormat, int, Path]) -> None:
    texts, text_format, size, path = job
    learn_vocabulary(texts, text_format, size).to_file(path)  # atomic: a concurrent sweep job reads


def _digest(texts: list[str], text_format: TextFormat, size: int) -> str:
    digest = hashlib.sha256(f"{text_format.kind}|{text_format.lowercase}|{size}|{_LEARNER}\n".encode())
    for text in texts:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()[:24]
