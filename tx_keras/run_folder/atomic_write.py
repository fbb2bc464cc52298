"""Files a kill cannot leave half-written: the one way every file of the suite is written.

Write a temporary file in the target's folder, flush and fsync it, rename it over the target, fsync the
folder (so the rename itself survives a power cut); a write that raises removes the temporary file and
leaves the target as it was (a full disk included: the temporary file is removed, and the error names
the target).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any


def _sync_folder(folder: Path) -> None:
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder for any writer (NumPy, a TFRecordWriter, Keras ...);
    when the block succeeds the file is synced and renamed to `path`. The temporary name ends in
    `path`'s suffix, for writers that pick the format by it (`model.save` wants `.keras`).

    A reader (or a restarted run) sees the old file or the new one, never a torn one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".tmp{path.suffix}")
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        with open(temp, "rb") as stream:
            os.fsync(stream.fileno())  # the bytes are on disk before the name points at them
        temp.chmod(0o644)  # mkstemp makes it private; a run's files are as readable as any other output
        os.replace(temp, path)
    except BaseException as error:
        with suppress(OSError):  # on a read-only or vanished folder the removal fails too: keep the cause
            temp.unlink(missing_ok=True)
        if isinstance(error, OSError):
            error.filename = str(path)  # the file being written, not its temporary name (or none: a stream)
        raise
    _sync_folder(path.parent)


def write_bytes(path: Path, data: bytes) -> Path:
    """`path` holds `data`, atomically."""
    with atomic_file(path) as temp:
        temp.write_bytes(data)
    return Path(path)


def write_text(path: Path, text: str) -> Path:
    """`path` holds `text` in UTF-8, atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_figure(path: Path, figure: Any) -> Path:
    """A matplotlib figure saved to `path` in the format its suffix names (`.png`, `.svg` ...), atomically."""
    with atomic_file(path) as temp:
        figure.savefig(temp, format=Path(path).suffix.lstrip(".") or None)
    return Path(path)


def write_json(path: Path, value: Any, **options: Any) -> Path:
    """`path` holds `value` as JSON (indented, keys sorted, a final newline unless `options` say
    otherwise; NaN allowed as Python's json writes it), atomically."""
    options = {"indent": 2, "sort_keys": True, **options}
    return write_text(path, json.dumps(value, **options) + "\n")
