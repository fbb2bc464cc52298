"""One writer per run folder: an exclusive OS lock on a file inside it, held for the writing process's life.

`fcntl.flock` locks belong to the open file, so the kernel drops them when the process ends however it
ends (kill -9, the OOM killer, a power cut): a lock is never stale and nothing ever has to clean one up.
The lock file itself is never replaced or deleted (a new inode would be a second, independent lock); it
holds the holder's PID, host and start time, rewritten in place by each new holder, so that a refusal can
name who is writing.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path

from tx_keras.run_folder.run_folder_error import RunFolderError

LOCK_NAME = ".lock"
# File systems without flock (some FUSE and old NFS mounts): the run goes on without the guard.
_UNSUPPORTED = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)

_HELD: dict[Path, int] = {}  # folder -> the open lock file, for as long as this process holds it


class RunFolderInUse(RunFolderError):
    """Another process holds the folder's lock: this one must not write there."""


def _holder(handle: int) -> str:
    """Who holds the lock, as the holder wrote it ('another process' while it is still writing it)."""
    try:
        info = json.loads(os.pread(handle, 4096, 0).decode("utf-8"))
        return f"PID {info['pid']} on {info['host']}, started {info['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def hold(folder: Path) -> bool:
    """Take `folder`'s lock for the rest of this process (the folder is created if need be); True when
    held, False on a file system without locks. A no-op when this process holds it already.

    Raises `RunFolderInUse` naming the holder, having changed nothing, when another process holds it.
    """
    folder = Path(folder).resolve()
    if folder in _HELD:
        return True
    folder.mkdir(parents=True, exist_ok=True)
    handle = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(handle)
        os.close(handle)
        raise RunFolderInUse(
            f"{folder} is in use by another tx-train ({holder}); wait for it to end, or give this run "
            "its own folder"
        ) from None
    except OSError as error:
        os.close(handle)
        if error.errno in _UNSUPPORTED:
            return False
        raise
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime())
    info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}) + "\n"
    os.ftruncate(handle, 0)
    os.pwrite(handle, info.encode("utf-8"), 0)
    _HELD[folder] = handle
    return True


def release(folder: Path) -> None:
    """Give the lock back (a sweep's job in a reused worker process); nothing when not held here."""
    handle = _HELD.pop(Path(folder).resolve(), None)
    if handle is not None:
        os.close(handle)  # closing the only descriptor of the open file releases its flock


def holds(folder: Path) -> bool:
    """Whether this process holds `folder`'s lock."""
    return Path(folder).resolve() in _HELD
