"""Files a kill cannot leave half-written: write to a temporary file next to the target, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder; when the block succeeds it is synced and renamed to `path`.

    A reader (or a restarted run) sees the old file or the new one, never a torn one; a block that
    raises leaves `path` untouched and removes the temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        with open(temp, "rb") as stream:
            os.fsync(stream.fileno())  # the bytes are on disk before the name points at them
        temp.chmod(0o644)  # mkstemp makes it private; a run's files are as readable as any other output
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
