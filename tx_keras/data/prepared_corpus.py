"""A streamed corpus read once into its parts: the training pairs (a normalised TSV file that tf.data reads as
lines), the small validation and test sets, a seeded sample for the vocabularies, and the line counts.

One pass over the file(s) with bounded memory: each line is read, checked and counted as parallel_corpus.py
does, its source hashed (held_out_sources.py decides the held-out sets), and training pairs are written out
as they become known. The result is cached under the cache folder by the files (path, size, modification
time) and the keys that change it, so the next run with the same corpus starts at once.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import os
import random
import shutil
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.held_out_sources import HeldOutSources, Pair
from tx_keras.data.parallel_corpus import choose_member, new_counts, read_pairs, skipped_text
from tx_keras.data.source_hash import source_hash

log = logging.getLogger(__name__)

_VERSION = "prepared-corpus-v2"  # part of the cache key: change it when preparation changes
_LOG_EVERY = 1_000_000
# Training pairs go to this many part files by a hash of the pair, then each part is shuffled on its own (one
# part in memory at a time): a file sorted by length (Tatoeba is) becomes a seeded random order, and an epoch
# reads the parts in its own order (train_stream.py).
PARTS = 64


@dataclass(frozen=True)
class PreparedCorpus:
    """The parts of a prepared corpus, in `folder`: train.tsv, validation.tsv, test.tsv, sample.tsv."""

    folder: Path
    name: str
    counts: dict[str, int]  # the line counts of parallel_corpus.CorpusReading
    pairs: dict[str, int]  # pairs per split

    @property
    def train_files(self) -> list[Path]:
        """The training pairs in `PARTS` files, each in a seeded random order."""
        return [self.folder / f"train-{part:03d}.tsv" for part in range(PARTS)]

    def texts(self, part: str) -> list[Pair]:
        """The pairs of a small part: validation, test or sample."""
        with open(self.folder / f"{part}.tsv", encoding="utf-8") as stream:
            return [tuple(line.rstrip("\n").split("\t")) for line in stream]  # type: ignore[misc]

    def report(self) -> str:
        return f"{self.name}: {self.counts['lines']} lines, {self.counts['kept']} pairs kept; skipped: " + (
            skipped_text(self.counts)
        )


def prepare_corpus(
    files: list[Path],
    cache: Path,
    *,
    source_column: int,
    target_column: int,
    lowercase: bool,
    max_words: int | None,
    member: str | None,
    num_validation: int,
    num_test: int,
    seed: int,
    sample_size: int,
) -> PreparedCorpus:
    """The prepared corpus of `files` (read and written now, or found in `cache`)."""
    settings = {
        "version": _VERSION,
        "files": [[str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files],
        "columns": [source_column, target_column],
        "lowercase": lowercase,
        "max_words": max_words,
        "member": member,
        "held_out": [num_validation, num_test],
        "seed": seed,
        "sample_size": sample_size,
    }
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:24]
    folder = cache / key
    if not (folder / "meta.json").exists():
        _prepare(files, folder, settings, member, num_validation, num_test, seed, sample_size)
    else:
        log.info("streamed corpus: prepared parts found in %s", folder)
    meta = json.loads((folder / "meta.json").read_text())
    return PreparedCorpus(folder, meta["name"], meta["counts"], meta["pairs"])


def _prepare(
    files: list[Path],
    folder: Path,
    settings: dict,
    member: str | None,
    num_validation: int,
    num_test: int,
    seed: int,
    sample_size: int,
) -> None:
    started = time.perf_counter()
    counts = new_counts()
    held_out = HeldOutSources(num_validation, num_test)
    sample: list[tuple[int, Pair]] = []  # min-heap of (-key, pair): the sample_size smallest keys
    source_column, target_column = settings["columns"]
    temp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    train = 0
    parts = [open(temp / f"raw-{part:03d}.tsv", "w", encoding="utf-8") for part in range(PARTS)]
    try:

        def write(pairs: list[Pair]) -> None:
            nonlocal train
            for pair in pairs:
                line = f"{pair[0]}\t{pair[1]}"
                key = source_hash(line, seed, "pair")  # picks the part and the sample
                parts[key % PARTS].write(line + "\n")
                if len(sample) < sample_size:
                    heapq.heappush(sample, (-key, pair))
                elif key < -sample[0][0]:
                    heapq.heapreplace(sample, (-key, pair))
            train += len(pairs)

        for path in files:
            with _opened(path, member) as stream:
                for pair in read_pairs(
                    stream, counts, source_column, target_column, settings["lowercase"], settings["max_words"]
                ):
                    write(held_out.add(source_hash(pair[0], seed), pair))
                    if counts["lines"] % _LOG_EVERY == 0:
                        log.info("streamed corpus: %d lines read, %d training pairs", counts["lines"], train)
        splits, leftover = held_out.splits()
        write(leftover)
    finally:
        for part in parts:
            part.close()
    for part in range(PARTS):
        _shuffle_part(temp / f"raw-{part:03d}.tsv", temp / f"train-{part:03d}.tsv", seed * PARTS + part)
    name = files[0].name if len(files) == 1 else f"{files[0].name} (+{len(files) - 1} files)"
    if train == 0 or len(splits["test"]) < num_test or len(splits["validation"]) < num_validation:
        shutil.rmtree(temp, ignore_errors=True)
        raise CorpusError(
            f"{name}: {counts['kept']} sentence pairs ({counts['lines']} lines: {skipped_text(counts)}) are "
            f"too few for num_validation={num_validation} + num_test={num_test} pairs and a training split"
        )
    ordered_sample = [pair for _, pair in sorted(sample, key=lambda item: -item[0])]
    for part, pairs in (*splits.items(), ("sample", ordered_sample)):
        with open(temp / f"{part}.tsv", "w", encoding="utf-8") as out:
            out.writelines(f"{source}\t{target}\n" for source, target in pairs)
    pair_counts = {"train": train, "validation": len(splits["validation"]), "test": len(splits["test"])}
    meta = {"name": name, "counts": counts, "pairs": pair_counts, "settings": settings}
    (temp / "meta.json").write_text(json.dumps(meta, indent=1))
    try:
        temp.rename(folder)  # atomic: a concurrent job finds all parts or none
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)  # another job prepared it first
    log.info(
        "streamed corpus: %d lines read in %.0f s, %d training pairs written to %s",
        counts["lines"],
        time.perf_counter() - started,
        train,
        folder,
    )


def _shuffle_part(raw: Path, shuffled: Path, seed: int) -> None:
    """`raw`'s lines in a seeded random order."""
    with open(raw, encoding="utf-8") as stream:
        lines = stream.readlines()
    random.Random(seed).shuffle(lines)
    with open(shuffled, "w", encoding="utf-8") as out:
        out.writelines(lines)
    raw.unlink()


@contextmanager
def _opened(path: Path, member: str | None) -> Iterator[BinaryIO]:
    """The file's bytes as a stream: a plain file, or a zip archive's member (read in place)."""
    try:
        if zipfile.is_zipfile(path):
            with (
                zipfile.ZipFile(path) as archive,
                archive.open(choose_member(archive, path, member)) as stream,
            ):
                yield stream
        else:
            with open(path, "rb") as stream:
                yield stream
    except OSError as error:
        raise CorpusError(f"{path}: cannot read: {error.strerror or error}") from error
