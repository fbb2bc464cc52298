"""`data.path` as one or several local files: a glob (`corpus/part-*.tsv`) or a comma-separated list is read
as one corpus, in sorted (glob) or given (list) order, so a corpus split into parts needs no concatenation."""

from __future__ import annotations

import glob
from pathlib import Path

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.corpus_location import resolve_corpus

_GLOB = set("*?[")


def corpus_files(location: str, cache_dir: str | None, sha256: str | None) -> list[Path]:
    """The files of `location`: each comma-separated part resolved as `resolve_corpus` does (a path or a URL),
    a part with glob characters expanded (sorted; one that matches nothing is a CorpusError). `sha256` checks
    a single file only."""
    parts = [part.strip() for part in location.split(",") if part.strip()]
    if not parts:
        raise CorpusError("data.path is empty; give a corpus file, a glob or a comma-separated list")
    files: list[Path] = []
    for part in parts:
        if _GLOB & set(part) and "://" not in part:
            matches = sorted(glob.glob(str(Path(part).expanduser())))
            if not matches:
                raise CorpusError(f"data.path={part}: the glob matches no file")
            files += [resolve_corpus(match, cache_dir) for match in matches]
        else:
            files.append(resolve_corpus(part, cache_dir))
    if sha256 is not None:
        if len(files) != 1:
            raise CorpusError(f"data.sha256 checks one file, but data.path names {len(files)} files")
        files = [resolve_corpus(str(files[0]), cache_dir, sha256)]
    return files
