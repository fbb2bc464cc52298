"""Hydra callback: in a multi-process run only process 0 writes the run folder; the others work in a
private temporary folder, removed when they exit.

Every process of a data-parallel run executes the same program step by step (JAX's processes meet in
each step's collectives, evaluation and checkpoints included), so each needs the folder's state to start
from (run.json, summary.json, the last checkpoint) but none other than process 0 may write there: two
writers would interleave events and race on checkpoints. Before Hydra creates the folder, opens
train.log or writes `.hydra/`, a process other than 0 gets `hydra.run.dir` pointed at a fresh temporary
folder seeded with a copy of what a resume reads from the real one (read only: on a cluster, the run
folder on a file system all machines see). A killed process leaves its temporary folder behind, in
the system's temporary directory (`tx-train-process-*`); the next start of a process removes it.

Runs before run_folder_lock (conf/hydra/default.yaml), which then locks the temporary folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, read_write

from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH
from tx_keras.run_folder.run_marker import MARKER_NAME
from tx_keras.run_folder.summary import SUMMARY_NAME
from tx_keras.training.processes.process_group import ProcessGroup
from tx_keras.user_error import UserError

# What a starting run reads from its folder: whether it is done, the config it started with, where it was.
_STATE = (Path(SUMMARY_NAME), Path(MARKER_NAME), CHECKPOINT_PATH)
_PREFIX = "tx-train-process-"


def _remove_orphans() -> None:
    """Private folders of processes that no longer run (killed, or ended by a peer's death)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-pid*"):
        pid = folder.name.rpartition("-pid")[2].split("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's live process
            pass


def private_copy(run_dir: Path, index: int) -> Path:
    """A new temporary folder holding `run_dir`'s state files (those that exist), removed at exit (and,
    after a kill, by the next start)."""
    _remove_orphans()
    folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{index}-pid{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for name in _STATE:
        if (run_dir / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(run_dir / name, folder / name)
    return folder


class WorkerFolder(Callback):
    """Points a non-zero process's run folder at its private copy (a single run; sweeps are one process)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            group = ProcessGroup.of(config.trainer)
        except UserError:  # the config check reports it, once, as the run starts
            return
        if group.is_writer:
            return
        node = config.hydra.run
        with read_write(node):
            node.dir = str(private_copy(Path(node.dir), group.index))
