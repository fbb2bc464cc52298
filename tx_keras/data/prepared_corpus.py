"""A streamed corpus read once into its parts: the training pairs (a normalised TSV file that tf.data reads as
lines), the small validation and test sets, a seeded sample for the vocabularies, and the line counts.

One pass over the file(s) with bounded memory, cut into byte ranges that worker processes read at once (one a
core: the pass is Python, one core per process): each line is read, checked and counted as parallel_corpus.py
does, its source hashed (held_out_sources.py decides the held-out sets), and training pairs are written out
as they become known (prepared_range.py); the ranges' held-out candidates and samples are merged here. The
result is cached under the cache folder by the files (path, size, modification time) and the keys that
change it, so the next run with the same corpus starts at once. A cached folder whose parts no longer match
what its meta.json recorded (a part missing, truncated or edited; meta.json itself unreadable) is prepared
again, with one line in the log, never read as it is.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import logging
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.corpus_ranges import corpus_ranges
from tx_keras.data.held_out_sources import HeldOutSources, Pair
from tx_keras.data.line_counts import CountedLines, new_counts, skipped_text
from tx_keras.data.prepared_range import PARTS, RangeTask, TrainingSink, prepare_range, raw_part
from tx_keras.data.worker_processes import map_in_processes

log = logging.getLogger(__name__)

_VERSION = (
    "prepared-corpus-v5"  # part of the cache key: change it when preparation changes (v5: text_rule.py)
)
_SMALL_PARTS = (
    "validation",
    "test",
    "sample",
)  # checked by content when found in the cache; the rest by size
_PARALLEL_BYTES = 16 << 20  # smaller corpora are prepared in this process
_MAX_WORKERS = 8


@dataclass(frozen=True)
class PreparedCorpus(CountedLines):
    """The parts of a prepared corpus, in `folder`: train.tsv, validation.tsv, test.tsv, sample.tsv."""

    folder: Path
    pairs: dict[str, int]  # pairs per split

    @property
    def train_files(self) -> list[Path]:
        """The training pairs in `PARTS` files, each in a seeded random order."""
        return [self.folder / f"train-{part:03d}.tsv" for part in range(PARTS)]

    def texts(self, part: str) -> list[Pair]:
        """The pairs of a small part: validation, test or sample."""
        with open(self.folder / f"{part}.tsv", encoding="utf-8") as stream:
            return [tuple(line.rstrip("\n").split("\t")) for line in stream]  # type: ignore[misc]


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
    workers: int | None = None,
) -> PreparedCorpus:
    """The prepared corpus of `files` (read and written now, or found in `cache`), by `workers` processes
    (None: one per usable core for a corpus of 16 MB or more); the result does not depend on their number."""
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
    damage = _damage(folder)
    if damage:
        log.warning("streamed corpus: the prepared parts in %s %s; preparing them again", folder, damage)
        shutil.rmtree(folder, ignore_errors=True)
    if not (folder / "meta.json").exists():
        temp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
        held_out = (num_validation, num_test)
        try:
            _prepare(files, folder, temp, settings, member, *held_out, seed, sample_size, workers)
        finally:
            shutil.rmtree(temp, ignore_errors=True)  # a failed pass (a full disk, a bad corpus) leaves none
    else:
        log.info("streamed corpus: prepared parts found in %s", folder)
    damage = _damage(folder)
    if damage:  # a run that just wrote them does not find them: the disk, or another job removing them
        raise CorpusError(f"streamed corpus: the prepared parts in {folder} {damage} right after preparing")
    meta = json.loads((folder / "meta.json").read_text())
    return PreparedCorpus(name=meta["name"], counts=meta["counts"], folder=folder, pairs=meta["pairs"])


def _damage(folder: Path) -> str | None:
    """What is wrong with a cached prepared corpus ("miss train-003.tsv", ...), None when it is sound or
    absent: every part has the size meta.json recorded, and the small parts the content too."""
    if not folder.exists():
        return None
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        recorded = {str(name): (int(size), digest) for name, (size, digest) in meta["parts"].items()}
        complete = isinstance(meta["name"], str) and "kept" in meta["counts"] and "train" in meta["pairs"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # UnicodeDecodeError is a ValueError
        return "have no readable meta.json"
    if not complete:
        return "have an incomplete meta.json"
    for name, (size, digest) in recorded.items():
        path = folder / name
        if not path.is_file():
            return f"miss {name}"
        if path.stat().st_size != size:
            return f"hold a {name} of {path.stat().st_size} bytes, not {size}"
        if digest is not None and _digest(path) != digest:
            return f"hold a {name} whose content changed"
    return None


def _digest(path: Path) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _recorded_parts(folder: Path) -> dict[str, tuple[int, str | None]]:
    """Every part's size, and the small parts' content digest, for `_damage` to check."""
    names = [f"{part}.tsv" for part in _SMALL_PARTS] + [f"train-{part:03d}.tsv" for part in range(PARTS)]
    return {
        name: (
            (folder / name).stat().st_size,
            _digest(folder / name) if name.removesuffix(".tsv") in _SMALL_PARTS else None,
        )
        for name in names
    }


def _prepare(
    files: list[Path],
    folder: Path,
    temp: Path,
    settings: dict,
    member: str | None,
    num_validation: int,
    num_test: int,
    seed: int,
    sample_size: int,
    workers: int | None,
) -> None:
    started = time.perf_counter()
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    workers = workers or _workers(files)
    tasks = [
        RangeTask(
            piece,
            index,
            temp,
            tuple(settings["columns"]),
            settings["lowercase"],
            settings["max_words"],
            num_validation,
            num_test,
            seed,
            sample_size,
        )
        for index, piece in enumerate(corpus_ranges(files, member, workers))
    ]
    counts = new_counts()
    held_out = HeldOutSources(num_validation, num_test)
    merged = TrainingSink(temp, len(tasks), seed, sample_size)  # the candidates the merge finds are training
    sample: list[tuple[int, Pair]] = []
    train = 0
    try:
        for result in _mapped(prepare_range, tasks, workers):
            for key in counts:
                counts[key] += result.counts[key]
            train += result.train
            sample = heapq.nsmallest(sample_size, itertools.chain(sample, result.sample))  # stays bounded
            for key, pair in result.candidates:  # in file order: a source's pairs keep their order
                merged.write(held_out.add(key, pair))
            log.info("streamed corpus: %d lines read, %d training pairs", counts["lines"], train)
        splits, leftover = held_out.splits()
        merged.write(leftover)
    finally:
        merged.close()
    train += merged.train
    sample = heapq.nsmallest(sample_size, itertools.chain(sample, merged.sample))
    shuffles = [(temp, part, len(tasks) + 1, seed * PARTS + part) for part in range(PARTS)]
    for _ in _mapped(_shuffle_part, shuffles, workers):
        pass
    name = files[0].name if len(files) == 1 else f"{files[0].name} (+{len(files) - 1} files)"
    if train == 0 or len(splits["test"]) < num_test or len(splits["validation"]) < num_validation:
        raise CorpusError(
            f"{name}: {counts['kept']} sentence pairs ({counts['lines']} lines: {skipped_text(counts)}) are "
            f"too few for num_validation={num_validation} + num_test={num_test} pairs and a training split"
        )
    ordered_sample = [pair for _, pair in reversed(sample)]  # as earlier versions: largest key first
    for part, pairs in (*splits.items(), ("sample", ordered_sample)):
        with open(temp / f"{part}.tsv", "w", encoding="utf-8") as out:
            out.writelines(f"{source}\t{target}\n" for source, target in pairs)
    pair_counts = {"train": train, "validation": len(splits["validation"]), "test": len(splits["test"])}
    parts = _recorded_parts(temp)
    meta = {"name": name, "counts": counts, "pairs": pair_counts, "settings": settings, "parts": parts}
    (temp / "meta.json").write_text(json.dumps(meta, indent=1))
    try:
        temp.rename(folder)  # atomic: a concurrent job finds all parts or none
    except OSError:
        pass  # another job prepared it first; the caller removes this one's copy
    log.info(
        "streamed corpus: %d lines read in %.0f s by %d process(es), %d training pairs written to %s",
        counts["lines"],
        time.perf_counter() - started,
        workers,
        train,
        folder,
    )


def _workers(files: list[Path]) -> int:
    """One process per usable core for a corpus worth it (starting one costs about a second), else one."""
    if sum(path.stat().st_size for path in files) < _PARALLEL_BYTES:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), _MAX_WORKERS))


def _mapped(function: Callable[[Any], Any], jobs: list[Any], workers: int) -> Iterator[Any]:
    """The jobs' results in order: computed here with one worker, else by worker processes."""
    if workers == 1:
        return map(function, jobs)
    return map_in_processes(function, jobs, workers)


def _shuffle_part(job: tuple[Path, int, int, int]) -> None:
    """One part's lines from every range, sorted (so the order the ranges wrote them in cannot matter), then
    in a seeded random order."""
    folder, part, ranges, seed = job
    lines: list[str] = []
    for index in range(ranges):
        raw = raw_part(folder, part, index)
        with open(raw, encoding="utf-8") as stream:
            lines += stream.readlines()
        raw.unlink()
    lines.sort()
    random.Random(seed).shuffle(lines)
    with open(folder / f"train-{part:03d}.tsv", "w", encoding="utf-8") as out:
        out.writelines(lines)
