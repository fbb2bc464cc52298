"""The lines of a corpus cut into byte ranges, so that several processes read one file at once, each its own
lines, with no index and no pass before: a range holds the lines that start inside it. A zip member is read in
place from its start (it cannot be entered in the middle), so it is one range."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.parallel_corpus import choose_member


@dataclass(frozen=True)
class CorpusRange:
    """The lines of `path` that start at a byte offset in [start, end); end None: to the end of the file."""

    path: Path
    start: int
    end: int | None
    member: str | None  # the zip member to read, when `path` is a zip archive


def corpus_ranges(files: list[Path], member: str | None, pieces: int) -> list[CorpusRange]:
    """`files` in order, each plain file cut into `pieces` ranges of about equal size (a zip: one range)."""
    ranges = []
    for path in files:
        if zipfile.is_zipfile(path):
            ranges.append(CorpusRange(path, 0, None, member))
            continue
        size = path.stat().st_size
        cuts = sorted({size * piece // pieces for piece in range(pieces)})
        ends = [*cuts[1:], None]
        ranges += [CorpusRange(path, start, end, None) for start, end in zip(cuts, ends, strict=True)]
    return ranges


@contextmanager
def range_lines(piece: CorpusRange) -> Iterator[Iterator[bytes]]:
    """The raw lines (with their newline) of `piece`."""
    try:
        if zipfile.is_zipfile(piece.path):
            with (
                zipfile.ZipFile(piece.path) as archive,
                archive.open(choose_member(archive, piece.path, piece.member)) as stream,
            ):
                yield iter(stream)
        else:
            with open(piece.path, "rb") as stream:
                yield _lines_from(stream, piece.start, piece.end)
    except OSError as error:
        raise CorpusError(f"{piece.path}: cannot read: {error.strerror or error}") from error


def _lines_from(stream, start: int, end: int | None) -> Iterator[bytes]:
    if start:
        stream.seek(start - 1)
        stream.readline()  # the rest of the line that starts before `start` (just its newline if none)
    position = stream.tell()
    for line in stream:
        if end is not None and position >= end:
            return
        position += len(line)
        yield line
