"""Reads the sentence pairs of a tab-separated parallel corpus, plain or zipped, such as the manythings.org
Tatoeba "Anki" files (`English<TAB>Translation[<TAB>attribution]`).

Real corpora carry a few broken lines (a missing tab, an empty side, bytes that are not UTF-8); one of them
must not stop a run, but silently dropping them would hide a wrong column choice or a damaged file. So each
line is decoded on its own, every skipped line is counted by reason, and the counts are reported.
"""

import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.text_normalization import normalize_text

_BOM = "\ufeff"
_TEXT_SUFFIXES = (".txt", ".tsv")


@dataclass(frozen=True)
class CorpusReading:
    """The normalised (source, target) pairs of a corpus file, and how many lines were skipped and why.

    counts: lines (all lines read) = kept + blank (no visible text) + malformed (too few tab-separated
    columns) + invalid_utf8 + empty (a side empty after normalisation) + overlong (a side over max_words).
    """

    pairs: list[tuple[str, str]]
    counts: dict[str, int]
    name: str

    def report(self) -> str:
        """One line for the run log, e.g. "eng-fra.tsv: 167130 lines, 167120 pairs kept; skipped: ..."."""
        return f"{self.name}: {self.counts['lines']} lines, {self.counts['kept']} pairs kept; skipped: " + (
            skipped_text(self.counts)
        )


def read_parallel_corpus(
    path: Path,
    source_column: int = 0,
    target_column: int = 1,
    lowercase: bool = False,
    max_words: int | None = None,
    member: str | None = None,
) -> CorpusReading:
    """The pairs (column `source_column`, column `target_column`) of the file at `path`, normalised with
    `normalize_text`; pairs with a side over `max_words` whitespace-separated words are skipped.

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
        readable = counts["lines"] - counts["invalid_utf8"] - counts["blank"]
        hint = (
            f"; source_column={source_column} and target_column={target_column} need {needed} "
            "tab-separated columns"
            if 0 < readable == counts["malformed"]  # every readable line: the columns are likely wrong
            else ""
        )
        raise CorpusError(
            f"{where}: no valid sentence pairs ({counts['lines']} lines: {skipped_text(counts)}){hint}"
        )
    return CorpusReading(pairs=pairs, counts=counts, name=name)


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


def new_counts() -> dict[str, int]:
    """Line counts by outcome (CorpusReading.counts), all zero."""
    return dict.fromkeys(("lines", "kept", "blank", "malformed", "invalid_utf8", "empty", "overlong"), 0)


def read_pairs(
    stream: Iterable[bytes],
    counts: dict[str, int],
    source_column: int,
    target_column: int,
    lowercase: bool,
    max_words: int | None,
    file_start: bool = True,
) -> Iterator[tuple[str, str]]:
    """The normalised pairs of `stream`'s lines, one at a time, each line counted in `counts` (a streamed
    corpus reads its files through this too, so both paths skip and count the same lines). `file_start`:
    the first line is the file's (a byte-order mark there is dropped), not the first of a later range."""
    needed = max(source_column, target_column) + 1
    first = file_start
    for raw in stream:
        counts["lines"] += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            counts["invalid_utf8"] += 1
            first = False
            continue
        if first:
            line, first = line.removeprefix(_BOM), False
        line = line.rstrip("\r\n")
        if not line.strip():
            counts["blank"] += 1
            continue
        fields = line.split("\t")
        if len(fields) < needed:
            counts["malformed"] += 1
            continue
        source = normalize_text(fields[source_column], lowercase)
        target = normalize_text(fields[target_column], lowercase)
        if not source or not target:
            counts["empty"] += 1
        # Normalised text has single spaces, so a side has more than max_words words iff max_words spaces.
        elif max_words is not None and (source.count(" ") >= max_words or target.count(" ") >= max_words):
            counts["overlong"] += 1
        else:
            counts["kept"] += 1
            yield source, target


def skipped_text(counts: dict[str, int]) -> str:
    text = (
        f"{counts['malformed']} malformed, {counts['invalid_utf8']} invalid UTF-8, {counts['empty']} empty, "
        f"{counts['overlong']} overlong"
    )
    return text + (f", {counts['blank']} blank" if counts["blank"] else "")
