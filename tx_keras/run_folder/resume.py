"""Start a run in its folder, or continue it from the folder's last checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, Checkpoint, load_checkpoint
from tx_keras.run_folder.event_files import EVENTS_GLOB
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.run_folder.run_marker import MARKER_NAME, check_same_config, read_marker, write_marker
from tx_keras.run_folder.summary import SUMMARY_NAME

# The step each event folder gives an epoch: Keras' curves use the 0-based epoch index; the dashboard
# callbacks the number of completed epochs (diagnostics also step 0, before training). The dashboard
# writes into the run folder itself, where the HParams row and the `final/` scalars are written once,
# at the end. Older run folders have the dashboard and `final` in sub-folders of their own.
_KERAS_FOLDERS = ("train", "validation")
_DASHBOARD_FOLDERS = ("", "attention", "samples", "diagnostics")
_END_FOLDERS = ("final",)
_END_TAGS = ("final/", "_hparams_/")
# The training loss every few optimizer steps (training/callbacks/epoch_scalars.py), in `train`: its step
# is the optimizer's, not the epoch's.
STEP_LOSS_TAG = "batch_loss"


def start_or_resume(config: dict[str, Any], epochs: int, run_dir: Path) -> Checkpoint | None:
    """Mark a new run folder, or check an existing one and return the checkpoint to continue from.

    A folder with a checkpoint continues only under the config it started with (up to the keys of
    run_marker.RESUMABLE_CHANGES); one without starts over under the new config. On a resume the event
    files are rolled back to the checkpoint (or emptied when there is none yet; a checkpoint taken inside
    an epoch keeps the per-step loss up to its step and the epoch curves up to the epoch before),
    so the resumed run writes every epoch's points exactly once. Raises `RunFolderError` before
    touching anything when the folder cannot be continued. `config`: the run's whole config as plain
    values (as run.json records it); `epochs`: its trainer.epochs.
    """
    marker = read_marker(run_dir)
    if marker is None:
        if (run_dir / SUMMARY_NAME).exists() or any(run_dir.rglob(EVENTS_GLOB)):
            raise RunFolderError(
                f"{run_dir} holds a run without {MARKER_NAME} (another program's, or an older tx_keras's); "
                "use a new run folder"
            )
        write_marker(run_dir, config)
        return None
    checkpoint = load_checkpoint(run_dir / CHECKPOINT_PATH)
    if checkpoint is None:
        write_marker(run_dir, config)  # nothing learnt yet: start over, under this command's config
    else:
        check_same_config(run_dir, marker["config"], config)
    done = checkpoint.epoch if checkpoint else 0
    inside = checkpoint.batch if checkpoint else 0  # batches of epoch done + 1 (a mid-epoch checkpoint)
    if done > epochs:
        raise RunFolderError(
            f"{run_dir} has trained {done} epochs already, more than trainer.epochs={epochs}; "
            f"pass trainer.epochs={done} or more"
        )
    first_dropped = {folder: done for folder in _KERAS_FOLDERS}
    # Step 0 is the diagnostics before training: kept once training has started.
    first_dropped |= {folder: done + 1 if done or inside else 0 for folder in _DASHBOARD_FOLDERS}
    first_dropped |= {folder: 0 for folder in _END_FOLDERS}
    # The per-step loss curve is counted in optimizer steps: keep the points up to the checkpoint's step.
    step_cut = {STEP_LOSS_TAG: checkpoint.step + 1 if checkpoint else 0}
    from tx_keras.run_folder.event_rollback import rollback_events  # TensorFlow's record reader: resumes only

    rollback_events(run_dir, first_dropped, _END_TAGS, step_cut)
    within = f" and {inside} batches of epoch {done + 1}" if inside else ""
    print(f"tx-train: resuming {run_dir} after epoch {done} of {epochs}{within}", flush=True)
    return checkpoint
