"""The real-text task on a streamed corpus (`data.stream=true`): the training split stays on disk and is read
as a stream each epoch (train_stream.py); only the validation and test sets and a seeded vocabulary sample
are in memory, so memory does not grow with the corpus.

The split is by a hash of each source sentence (held_out_sources.py), the vocabularies are learned from the
sample and cached by its content (corpus_tokenizers.py, as for a corpus in memory), and the bad-line counts
are those of the one preparation pass, complete before training starts (prepared_corpus.py).
"""

from __future__ import annotations

import logging

import numpy as np
import tensorflow as tf

from tx_keras.data.batching.train_stream import TrainStream
from tx_keras.data.corpus_files import corpus_files
from tx_keras.data.corpus_location import cache_folder
from tx_keras.data.corpus_tokenizers import corpus_tokenizers
from tx_keras.data.parallel_corpus import reading_options
from tx_keras.data.parallel_text import tokenized, unknown_share
from tx_keras.data.prepared_corpus import prepare_corpus
from tx_keras.data.task import SPLITS, Task, pad_rows
from tx_keras.data.task_config import ParallelTextConfig
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary

log = logging.getLogger(__name__)

_COUNT_BATCH = 4096  # texts per tokenizer call when only their lengths are needed
_TRAIN_ROWS = 1024  # sample rows kept as the task's "train" arrays (model building, diagnostics)


def build_streamed_parallel_text(config: ParallelTextConfig) -> Task:
    """The keys of `config` are explained in conf/data/parallel_text.yaml (defaults in task_config.py)."""
    files = corpus_files(config.path, config.cache_dir, config.sha256)
    cache = cache_folder(config.cache_dir)
    prepared = prepare_corpus(
        files,
        cache / "streams",
        **reading_options(config),
        num_validation=config.num_validation,
        num_test=config.num_test,
        seed=config.seed,
        sample_size=config.stream_sample,
    )
    log.info(prepared.report())
    pairs = {"train": prepared.texts("sample"), **{s: prepared.texts(s) for s in ("validation", "test")}}
    sources = [source for source, _ in pairs["train"]]
    targets = [target for _, target in pairs["train"]]
    sides = corpus_tokenizers(config, sources, targets, cache / "vocabularies")
    source_tokenizer, target_tokenizer = sides.source, sides.target
    # Token ids of the held-out sets and of the sample rows the task keeps; the sample's lengths alone (as
    # numpy, never Python lists of ids: 200k rows) for the widths and the epoch's batch count.
    kept = {"train": pairs["train"][:_TRAIN_ROWS], "validation": pairs["validation"], "test": pairs["test"]}
    ids = {
        split: (
            [[*row, Vocabulary.EOS] for row in tokenized([s for s, _ in kept[split]], source_tokenizer)],
            [
                [Vocabulary.SOS, *row, Vocabulary.EOS]
                for row in tokenized([t for _, t in kept[split]], target_tokenizer)
            ],
        )
        for split in SPLITS
    }
    sample_source = _token_counts(sources, source_tokenizer) + 1  # + EOS
    sample_target = _token_counts(targets, target_tokenizer) + 2  # SOS + EOS
    # The widths: the longest rows of the sample and the held-out sets; training rows beyond are left out.
    source_width = max(int(sample_source.max()), *(len(row) for split in SPLITS for row in ids[split][0]))
    target_width = max(int(sample_target.max()), *(len(row) for split in SPLITS for row in ids[split][1]))
    stream = TrainStream(
        files=tuple(str(path) for path in prepared.train_files),
        source_tokenizer=source_tokenizer,
        target_tokenizer=target_tokenizer,
        source_width=source_width,
        target_width=target_width,
        pairs=prepared.pairs["train"],
        shuffle_buffer=config.stream_shuffle_buffer,
        sample_lengths=np.maximum(sample_source, sample_target),
        sample_tokens=float(np.mean(sample_source + sample_target - 1)),
    )
    pairs["train"] = kept["train"]
    splits = {
        split: (pad_rows(source, source_width), pad_rows(target, target_width))
        for split, (source, target) in ids.items()
    }
    report = {
        "corpus": prepared.name,
        "lines": dict(prepared.counts),
        "pairs": dict(prepared.pairs),
        **sides.report(),
        "unknown_target_tokens": {split: unknown_share(splits[split][1]) for split in SPLITS},
        "stream": {"sample": len(sources), "shuffle_buffer": config.stream_shuffle_buffer},
    }
    log.info(
        "parallel_text (streamed): %s train / %s validation / %s test pairs; vocabularies %d %s + %d %s "
        "tokens from a sample of %d pairs; rows up to %d source and %d target tokens",
        *report["pairs"].values(),
        len(sides.source_vocab),
        sides.source_format.kind,
        len(sides.target_vocab),
        sides.target_format.kind,
        len(sources),
        source_width,
        target_width,
    )
    vocabularies = sides.source_vocab, sides.target_vocab
    formats = sides.source_format, sides.target_format
    return Task("parallel_text", *vocabularies, splits, *formats, pairs, report, train_stream=stream)


def _token_counts(texts: list[str], tokenizer: TextTokenizer) -> np.ndarray:
    """Tokens per text (no SOS/EOS), tokenized in parallel batches by tf.data, kept as numpy."""
    dataset = (
        tf.data.Dataset.from_tensor_slices(texts)
        .batch(_COUNT_BATCH)
        .map(
            lambda batch: tokenizer.tokenize(batch).row_lengths(),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,  # in the texts' order
        )
    )
    return np.concatenate([batch.numpy() for batch in dataset]).astype(np.int64)
