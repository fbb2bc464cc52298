"""Checkpoints: everything a killed run needs to continue as if it had never stopped.

One file, `checkpoints/last.npz`, replaced atomically after each checkpointed epoch: every model
variable (weights and the dropout layers' random-seed states), every optimizer variable (the step
counter that drives the learning-rate schedule, Adam's moments) and the epoch's logs. A checkpoint taken
inside an epoch (a stop signal, `trainer.checkpoint_every_minutes`) also records how many of that epoch's
batches were trained and the metrics' running totals, so the epoch is finished exactly as it would have
been. Plain NumPy arrays loaded with `allow_pickle=False`: a run folder never makes tx_keras unpickle
anything.
"""

from __future__ import annotations

import errno
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tx_keras.run_folder.atomic_write import atomic_file
from tx_keras.run_folder.run_folder_error import RunFolderError

if TYPE_CHECKING:  # Keras only in the hints: the run report names CHECKPOINT_PATH before TensorFlow starts
    import keras

CHECKPOINT_PATH = Path("checkpoints") / "last.npz"


@dataclass(frozen=True)
class Checkpoint:
    """The state after `epoch` completed epochs and `batch` batches of the next one."""

    epoch: int
    logs: dict[str, float]  # that epoch's Keras logs (loss, accuracy, val_loss, ...) and callbacks' state
    model: list[np.ndarray]  # model.variables, in order
    optimizer: list[np.ndarray]  # model.optimizer.variables, in order
    step: int = 0  # optimizer updates done (0 in checkpoints of versions that did not record it)
    batch: int = 0  # batches of epoch `epoch + 1` trained already (0: taken at an epoch's end)
    metrics: list[np.ndarray] = field(default_factory=list)  # model.metrics_variables, when `batch`


@dataclass(frozen=True)
class CheckpointState:
    """What a checkpoint file holds, read out of the model (NumPy arrays, as the variables hold them)."""

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]


def checkpoint_state(model: keras.Model, epoch: int, logs: dict[str, Any], batch: int = 0) -> CheckpointState:
    """The state after `epoch` epochs and `batch` batches (with the metrics' totals then)."""
    meta = {
        "epoch": epoch,
        "batch": batch,
        "step": int(np.asarray(model.optimizer.iterations)),
        "logs": {key: float(value) for key, value in logs.items()},
    }
    arrays = {f"model_{i}": np.asarray(v) for i, v in enumerate(model.variables)}
    arrays.update({f"optimizer_{i}": np.asarray(v) for i, v in enumerate(model.optimizer.variables)})
    if batch:
        arrays.update({f"metric_{i}": np.asarray(v) for i, v in enumerate(model.metrics_variables)})
    return CheckpointState(meta, arrays)


def write_checkpoint(path: Path, state: CheckpointState) -> None:
    """Write `state` to `path` atomically.

    A run folder that was deleted under the run is not silently made again for it: that is a
    FileNotFoundError naming the checkpoint (run_folder/disk_fault.py words it)."""
    if not path.parent.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    with atomic_file(path) as temp, open(temp, "wb") as stream:
        np.savez(stream, meta=np.array(json.dumps(state.meta)), **state.arrays)


def save_checkpoint(path: Path, model: keras.Model, epoch: int, logs: dict[str, Any], batch: int = 0) -> None:
    """Write the checkpoint after `epoch` epochs and `batch` batches, now."""
    write_checkpoint(path, checkpoint_state(model, epoch, logs, batch))


def load_checkpoint(path: Path) -> Checkpoint | None:
    """The checkpoint at `path`, None if there is none; a damaged one is a `RunFolderError`."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(str(archive["meta"]))
            model, optimizer, metrics = (
                [archive[f"{kind}_{i}"] for i in range(sum(n.startswith(f"{kind}_") for n in archive.files))]
                for kind in ("model", "optimizer", "metric")
            )
        return Checkpoint(
            int(meta["epoch"]),
            dict(meta["logs"]),
            model,
            optimizer,
            int(meta.get("step", 0)),
            int(meta.get("batch", 0)),
            metrics,
        )
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise RunFolderError(
            f"checkpoint {path} is damaged ({type(error).__name__}); delete it to restart this run "
            "from epoch 0, or use a new run folder"
        ) from None


def _assign(variables: list, values: list[np.ndarray], what: str, path: Path) -> None:
    shapes = [tuple(v.shape) for v in variables]
    if shapes != [value.shape for value in values]:
        raise RunFolderError(
            f"checkpoint {path} does not fit this {what} ({len(values)} saved variables, "
            f"{len(variables)} here, or different shapes); use a new run folder"
        )
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)


def restore(model: keras.Model, checkpoint: Checkpoint, path: Path) -> None:
    """Load the checkpoint into a built, compiled model; the optimizer is built here if need be."""
    if not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)
    _assign(model.variables, checkpoint.model, "model", path)
    _assign(model.optimizer.variables, checkpoint.optimizer, "optimizer", path)


def restore_metrics(model: keras.Model, checkpoint: Checkpoint, path: Path) -> None:
    """Put back the metrics' running totals of a checkpoint taken inside an epoch (the metrics must be
    built: Keras builds compiled metrics in the first step, or `model.compute_metrics` on a batch)."""
    _assign(model.metrics_variables, checkpoint.metrics, "model's metrics", path)
