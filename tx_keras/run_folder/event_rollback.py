"""Rewind a run folder's TensorBoard event files to a checkpoint, so a resumed run logs each epoch once.

A run killed after writing epoch k+1's points but before checkpointing epoch k+1 (or between two
checkpoints) resumes at k and writes those epochs again; without a rollback the curves would hold them
twice (and a truncated last record from the kill would make readers stop early).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event

from tx_keras.run_folder.atomic_write import atomic_file
from tx_keras.run_folder.event_files import EVENTS_GLOB


def _kept_records(
    path: Path,
    first_dropped_step: int,
    end_tags: tuple[str, ...] = (),
    tag_steps: Mapping[str, int] | None = None,
) -> tuple[list[bytes], bool]:
    """The serialized events to keep, and whether anything was dropped (a torn last record counts).
    Events with a tag starting with one of `end_tags` (written once at a run's end) go at any step; a tag
    in `tag_steps` is cut at its own step instead of the folder's."""
    kept: list[bytes] = []
    dropped = False
    try:
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = Event.FromString(record)
            tags = [value.tag for value in event.summary.value]
            at_end = bool(end_tags) and any(tag.startswith(end_tags) for tag in tags)
            cutoff = min(
                (tag_steps[tag] for tag in tags if tag in (tag_steps or {})), default=first_dropped_step
            )
            if event.HasField("file_version") or (event.step < cutoff and not at_end):
                kept.append(record)
            else:
                dropped = True
    except tf.errors.DataLossError:  # the record being written when the process was killed
        dropped = True
    return kept, dropped


def rollback_events(
    run_dir: Path,
    first_dropped_step: Mapping[str, int],
    end_tags: tuple[str, ...] = (),
    tag_steps: Mapping[str, int] | None = None,
) -> None:
    """In each sub-folder named in `first_dropped_step` ("" = the run folder itself), drop the events
    at or after that step, and those tagged with an `end_tags` prefix at any step; tags counted in
    optimizer steps rather than epochs (`tag_steps`: tag -> first dropped step) are cut at their own
    step. A file left with nothing but its header is deleted."""
    for folder, step in first_dropped_step.items():
        for path in sorted((run_dir / folder).glob(EVENTS_GLOB)):
            kept, dropped = _kept_records(path, step, end_tags, tag_steps)
            if not dropped:
                continue
            if len(kept) <= 1:
                path.unlink()
                continue
            with atomic_file(path) as temp, tf.io.TFRecordWriter(str(temp)) as writer:
                for record in kept:
                    writer.write(record)
