"""The real-text task: a parallel corpus file -> the pairs the text rule keeps, cleaned -> split by source ->
learned vocabularies -> padded ids, tokenized inside tf.data."""

from __future__ import annotations

import logging

import numpy as np
import tensorflow as tf

from tx_keras.data.corpus_location import cache_folder, resolve_corpus
from tx_keras.data.corpus_tokenizers import corpus_tokenizers
from tx_keras.data.parallel_corpus import read_parallel_corpus, reading_options
from tx_keras.data.source_split import split_by_source
from tx_keras.data.task import SPLITS, Task, pad_rows
from tx_keras.data.task_config import ParallelTextConfig
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary

log = logging.getLogger(__name__)

_TOKENIZE_BATCH = 2048


def build_parallel_text(config: ParallelTextConfig) -> Task:
    """The keys of `config` are explained in conf/data/parallel_text.yaml (defaults in task_config.py)."""
    path = resolve_corpus(config.path, config.cache_dir, config.sha256)
    reading = read_parallel_corpus(path, **reading_options(config))
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
    cache = cache_folder(config.cache_dir) / "vocabularies"
    sides = corpus_tokenizers(config, train_sources, train_targets, cache)
    ids = {
        split: (
            tokenized([s for s, _ in pairs[split]], sides.source),
            tokenized([t for _, t in pairs[split]], sides.target),
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
        **sides.report(),
        "unknown_target_tokens": {split: unknown_share(splits[split][1]) for split in SPLITS},
    }
    log.info(
        "parallel_text: %s train / %s validation / %s test pairs; vocabularies %d %s + %d %s tokens; "
        "lengths up to %d source and %d target tokens",
        *report["pairs"].values(),
        len(sides.source_vocab),
        sides.source_format.kind,
        len(sides.target_vocab),
        sides.target_format.kind,
        source_length,
        target_length,
    )
    vocabularies = sides.source_vocab, sides.target_vocab
    formats = sides.source_format, sides.target_format
    return Task("parallel_text", *vocabularies, splits, *formats, pairs, report)


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
