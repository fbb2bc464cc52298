"""Checkpoints written while training goes on.

Writing one is mostly file work: the tatoeba_small model's 118 MB (weights and Adam's moments) take ~0.3 s
to zip, write and fsync on the Zen 4 kind, during which one core would wait for the main thread and the
other would idle. Here only the copy of the state is taken between two steps (~0.03 s); a thread of
its own writes the file while the next steps run. Writes stay one at a time and in order, atomic as
before, so a killed run finds the last whole checkpoint; a write's error (a full disk) is raised by
`check` after the next step, or by the next `save` or `flush`, which the callbacks call before training
ends or stops.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tx_keras.run_folder.checkpoint import CheckpointState, checkpoint_state, write_checkpoint

if TYPE_CHECKING:
    import keras


class BackgroundCheckpoint:
    """Saves checkpoints to `path` on a writer thread, one at a time."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def save(self, model: keras.Model, epoch: int, logs: dict[str, Any], batch: int = 0) -> None:
        """Copy the state now and write it meanwhile (after the previous write, whose error it raises)."""
        self.flush()
        state = checkpoint_state(model, epoch, logs, batch)
        # The writer reads the arrays while the next steps update the variables: each must own its memory
        # (`_owned`), so that no backend's update policy (copy-on-write, donated buffers) reaches the file.
        state = CheckpointState(state.meta, {name: _owned(array) for name, array in state.arrays.items()})
        # Not a daemon: a process that ends (or raises) while a checkpoint is written finishes it first.
        self._thread = threading.Thread(target=self._write, args=(state,), name="tx_keras checkpoint")
        self._thread.start()

    def flush(self) -> None:
        """Wait for the write in flight; raise its error, if it had one."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error

    def check(self) -> None:
        """Raise the error of a write that has ended, without waiting for one still in flight."""
        if self._thread is not None and not self._thread.is_alive():
            self.flush()

    def _write(self, state: CheckpointState) -> None:
        try:
            write_checkpoint(self.path, state)
        except BaseException as error:  # raised in the training thread by the next save or flush
            self._error = error


def _owned(array: np.ndarray) -> np.ndarray:
    """`array`, or a copy where it is a view of a backend's buffer (JAX's, which a later step may donate
    and overwrite). TensorFlow's reads are copies already: copying them again cost the first checkpoint of
    a process ~0.17 s of page faults on the AMX Xeon (113 MB), every later one ~17 ms."""
    return array if array.flags.owndata else array.copy()
