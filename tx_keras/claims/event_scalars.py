"""Scalars a run wrote to its event files: the diagnostics at initialisation and the validation curve."""

from __future__ import annotations

import math
from pathlib import Path

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

from tx_keras.comparison.plots import validation_curve


def diagnostics_at_init(run_dir: Path, prefix: str) -> dict[str, float]:
    """`{layer: value}` of the `prefix/<layer>` diagnostics (`gradient_norm`, `rank_collapse`) logged at
    step 0, before any training: `layers/prefix/<layer>` in the run folder, or `prefix/<layer>` in
    run_dir/diagnostics in older runs; empty when the run logged none."""
    folder = run_dir / "diagnostics"
    if folder.is_dir():
        return _at_init(folder, f"{prefix}/")
    return _at_init(run_dir, f"layers/{prefix}/")


def diagnostics_at_end(run_dir: Path, prefix: str) -> dict[str, float]:
    """`{layer: value}` of the `layers/prefix/<layer>` diagnostics at the last step they were logged (the end
    of training); empty when the run logged none."""
    return _at_step(run_dir, f"layers/{prefix}/", last=True)


def _at_init(folder: Path, prefix: str) -> dict[str, float]:
    """The step-0 values of the tags under `prefix` in `folder`'s event files, by the rest of the tag."""
    return _at_step(folder, prefix, last=False)


def _at_step(folder: Path, prefix: str, last: bool) -> dict[str, float]:
    """The values of the tags under `prefix` in `folder`'s event files, by the rest of the tag: at step 0,
    or (`last`) at each tag's last logged step."""
    events = event_accumulator.EventAccumulator(str(folder), size_guidance={event_accumulator.TENSORS: 0})
    events.Reload()
    values = {}
    for tag in events.Tags()["tensors"]:
        if tag.startswith(prefix):
            records = events.Tensors(tag)
            chosen = (
                [max(records, key=lambda record: record.step)]
                if last and records
                else [record for record in records if record.step == 0]
            )
            if chosen:
                values[tag[len(prefix) :]] = float(tensor_util.make_ndarray(chosen[-1].tensor_proto))
    return values


def accuracy_curve(run_dir: Path, steps_per_epoch: int) -> tuple[list[int], list[float]]:
    """Validation token accuracy after each epoch, against training steps (epochs x steps per epoch)."""
    epochs, values = validation_curve(run_dir, "epoch_accuracy")
    return [epoch * steps_per_epoch for epoch in epochs], values


def steps_to_reach(steps: list[int], values: list[float], target: float) -> int | None:
    """The first logged step at which the curve reaches `target`, None if it never does (NaN never does)."""
    for step, value in zip(steps, values, strict=True):
        if not math.isnan(value) and value >= target:
            return step
    return None


def steps_per_epoch(config: dict) -> int:
    """ceil(training rows / batch size) from a run's resolved config."""
    rows = int(config.get("data", {}).get("num_train", 0))
    batch = int(config.get("trainer", {}).get("batch_size", 1))
    return max(1, -(-rows // batch))
