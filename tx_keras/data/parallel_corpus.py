"""Reads the sentence pairs of a tab-separated parallel corpus, plain or zipped, such as the manythings.org
Tatoeba "Anki" files (`English<TAB>Translation[<TAB>attribution]`).

Each line is decoded and judged on its own by the text rule (text_rule.py), and every line is either kept or
counted under one reason (line_counts.py), so a broken line neither stops a run nor goes unreported.
"""

import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.line_counts import (
    BLANK,
    EMPTY,
    MALFORMED,
    OVERLONG,
    CountedLines,
    new_counts,
    skipped_text,
)
from tx_keras.data.task_config import ParallelTextConfig
from tx_keras.data.text_rule import CONTROL, INVALID_UTF8, clean_text, refusal

_BOM = "\ufeff"
_TEXT_SUFFIXES = (".txt", ".tsv")


def reading_options(config: ParallelTextConfig) -> dict[str, Any]:
    """The keys of data=parallel_text that decide how lines are read, for either corpus path."""
    keys = ("source_column", "target_column", "lowercase", "max_words", "member")
    return {key: getattr(config, key) for key in keys}


@dataclass(frozen=True)
class CorpusReading(CountedLines):
    """The cleaned (source, target) pairs of a corpus file, and how many lines were skipped and why."""

    pairs: list[tuple[str, str]]


def read_parallel_corpus(
    path: Path,
    source_column: int = 0,
    target_column: int = 1,
    lowercase: bool = False,
    max_words: int | None = None,
    member: str | None = None,
) -> CorpusReading:
    """The pairs (column `source_column`, column `target_column`) of the file at `path` that the text rule
    keeps, cleaned; pairs with a side over `max_words` whitespace-separated words are skipped.

    A zip archive is read in place: its member `member`, else its only .txt/.tsv member whose name does not
    start with "_" (manythings zips hold `_about.txt` next to the corpus). Raises CorpusError when the file
    cannot be read or holds no valid pair.
    """
    for key, column in (("source_column", source_column), ("target_column", target_column)):
        if column < 0:
            raise CorpusError(f"{key}={column} must be >= 0")
    if max_words is not None and max_words < 1:
        raise CorpusError(f"max_words={max_words} must be >= 1")
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                chosen = choose_member(archive, path, member)
                with archive.open(chosen) as stream:
                    pairs, counts = _read_lines(stream, source_column, target_column, lowercase, max_words)
            name, where = f"{path.name}:{chosen}", f"{path}:{chosen}"
        else:
            if member is not None:
                raise CorpusError(f"{path}: member={member!r} is given but the file is not a zip archive")
            if path.suffix.lower() == ".zip":
                raise CorpusError(f"{path}: not a valid zip archive")
            with open(path, "rb") as stream:
                pairs, counts = _read_lines(stream, source_column, target_column, lowercase, max_words)
            name, where = path.name, str(path)
    except OSError as error:
        raise CorpusError(f"{path}: cannot read: {error.strerror or error}") from error
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
        raise CorpusError(f"{path}: damaged or unsupported zip archive: {error}") from error
    if not pairs:
        needed = max(source_column, target_column) + 1
        readable = counts["lines"] - counts[INVALID_UTF8] - counts[BLANK]
        hint = ""
        if 0 < readable == counts[MALFORMED]:  # every readable line: the columns are likely wrong
            hint = (
                f"; source_column={source_column} and target_column={target_column} need {needed} "
                "tab-separated columns"
            )
        elif counts[INVALID_UTF8] + counts[CONTROL] >= max(counts["lines"] - counts[BLANK], 1) / 2:
            hint = "; is the file UTF-8? (UTF-16 reads as NUL bytes, a legacy code page as invalid UTF-8)"
        raise CorpusError(
            f"{where}: no valid sentence pairs ({counts['lines']} lines: {skipped_text(counts)}){hint}"
        )
    return CorpusReading(name=name, counts=counts, pairs=pairs)


def choose_member(archive: zipfile.ZipFile, path: Path, member: str | None) -> str:
    names = [info.filename for info in archive.infolist() if not info.is_dir()]
    listing = ", ".join(names) or "none"
    if member is not None:
        if member not in names:
            raise CorpusError(f"{path}: has no member {member!r} (members: {listing})")
        return member
    candidates = [
        name
        for name in names
        if name.lower().endswith(_TEXT_SUFFIXES) and not any(part.startswith("_") for part in name.split("/"))
    ]
    if len(candidates) == 1:
        return candidates[0]
    problem = (
        "several .txt/.tsv members, choose one with member=NAME" if candidates else "no .txt/.tsv member"
    )
    raise CorpusError(f"{path}: {problem} (members: {listing})")


def _read_lines(
    stream: BinaryIO, source_column: int, target_column: int, lowercase: bool, max_words: int | None
) -> tuple[list[tuple[str, str]], dict[str, int]]:
    counts = new_counts()
    pairs = list(read_pairs(stream, counts, source_column, target_column, lowercase, max_words))
    return pairs, counts


def read_pairs(
    stream: Iterable[bytes],
    counts: dict[str, int],
    source_column: int,
    target_column: int,
    lowercase: bool,
    max_words: int | None,
    file_start: bool = True,
) -> Iterator[tuple[str, str]]:
    """The cleaned pairs of `stream`'s lines, one at a time, each line counted in `counts` (a streamed
    corpus reads its files through this too, so both paths skip and count the same lines). A line ends at
    LF, CR LF or a lone CR (old Mac exports), as Python's universal newlines read text. `file_start`: the
    first line is the file's (a byte-order mark there is dropped), not the first of a later range."""
    needed = max(source_column, target_column) + 1
    first = file_start
    for chunk in stream:  # split at LF only: a range of a streamed corpus starts after an LF
        chunk = chunk.removesuffix(b"\n")
        for raw in chunk.removesuffix(b"\r").split(b"\r"):
            counts["lines"] += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                counts[INVALID_UTF8] += 1
                first = False
                continue
            if first:
                line, first = line.removeprefix(_BOM), False
            if not line.strip():
                counts[BLANK] += 1
                continue
            fields = line.split("\t")
            if len(fields) < needed:
                counts[MALFORMED] += 1
                continue
            source, target = fields[source_column], fields[target_column]
            reason = refusal(source) or refusal(target)
            if reason:
                counts[reason] += 1
                continue
            source, target = clean_text(source, lowercase), clean_text(target, lowercase)
            if not source or not target:
                counts[EMPTY] += 1
            # Cleaned text has single spaces, so a side has more than max_words words iff max_words spaces.
            elif max_words is not None and (source.count(" ") >= max_words or target.count(" ") >= max_words):
                counts[OVERLONG] += 1
            else:
                counts["kept"] += 1
                yield source, target
