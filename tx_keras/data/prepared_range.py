"""One byte range of a streamed corpus prepared by one worker process (prepared_corpus.py runs several at
once): its lines read, checked and counted, its training pairs written to its own part files, its held-out
candidates and its share of the sample returned for the merge. Nothing here depends on how the corpus was
cut: the merge and the sorted parts give the same prepared corpus for any number of ranges."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path

from tx_keras.data.corpus_ranges import CorpusRange, range_lines
from tx_keras.data.held_out_sources import HeldOutSources, Pair
from tx_keras.data.line_counts import new_counts
from tx_keras.data.parallel_corpus import read_pairs
from tx_keras.data.source_hash import source_hash

# Training pairs go to this many part files by a hash of the pair; each part is then sorted and shuffled on
# its own (one part in memory at a time): a file sorted by length (Tatoeba is) becomes a seeded random order,
# and an epoch reads the parts in its own order (train_stream.py).
PARTS = 64
Keyed = tuple[int, Pair]  # (key, pair)


@dataclass(frozen=True)
class RangeTask:
    """What a worker needs: the range, where its part files go, and the settings of the preparation."""

    piece: CorpusRange
    index: int  # the range's place in the corpus: names its part files
    folder: Path
    columns: tuple[int, int]
    lowercase: bool
    max_words: int | None
    num_validation: int
    num_test: int
    seed: int
    sample_size: int


@dataclass(frozen=True)
class RangeResult:
    counts: dict[str, int]  # the line counts of parallel_corpus.CorpusReading
    train: int  # training pairs written
    candidates: list[Keyed]  # the held-out candidates left, each source's pairs in file order
    sample: list[Keyed]  # the `sample_size` training pairs of smallest pair key written, with their keys


def raw_part(folder: Path, part: int, index: int) -> Path:
    return folder / f"raw-{part:03d}-{index:05d}.tsv"


def prepare_range(task: RangeTask) -> RangeResult:
    counts = new_counts()
    held_out = HeldOutSources(task.num_validation, task.num_test)
    sink = TrainingSink(task.folder, task.index, task.seed, task.sample_size)
    try:
        with range_lines(task.piece) as lines:
            first = task.piece.start == 0
            for pair in read_pairs(lines, counts, *task.columns, task.lowercase, task.max_words, first):
                sink.write(held_out.add(source_hash(pair[0], task.seed), pair))
    finally:
        sink.close()
    candidates = [(key, pair) for key, group in held_out.groups() for pair in group]
    return RangeResult(counts, sink.train, candidates, sink.sample)


class TrainingSink:
    """Training pairs to their part files (by pair key), the smallest keys kept as the sample."""

    def __init__(self, folder: Path, index: int, seed: int, sample_size: int):
        self.seed, self.sample_size, self.train = seed, sample_size, 0
        self.sample: list[Keyed] = []  # a min-heap of (-key, pair) while writing; (key, pair) once closed
        self._parts = [open(raw_part(folder, part, index), "w", encoding="utf-8") for part in range(PARTS)]

    def write(self, pairs: list[Pair]) -> None:
        for pair in pairs:
            line = f"{pair[0]}\t{pair[1]}"
            key = source_hash(line, self.seed, "pair")  # picks the part and the sample
            self._parts[key % PARTS].write(line + "\n")
            if len(self.sample) < self.sample_size:
                heapq.heappush(self.sample, (-key, pair))
            elif key < -self.sample[0][0]:
                heapq.heapreplace(self.sample, (-key, pair))
        self.train += len(pairs)

    def close(self) -> None:
        for part in self._parts:
            part.close()
        self.sample = [(-key, pair) for key, pair in self.sample]
