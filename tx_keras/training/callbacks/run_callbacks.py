"""The callbacks of one run's `fit`, in the order they must run, with handles on the ones whose state the
summary reads afterwards (why training stopped, the head-importance record)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import keras

from tx_keras.data import Task
from tx_keras.data.batching.epoch_batches import EpochBatches
from tx_keras.data.batching.input_batches import run_dataset
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, Checkpoint
from tx_keras.runtime.tensorflow_presence import tensorflow_installed
from tx_keras.training.callbacks.cooldown_clock import CooldownClock
from tx_keras.training.callbacks.early_stopping import EarlyStopping
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint
from tx_keras.training.callbacks.epoch_scalars import EpochScalars
from tx_keras.training.callbacks.epoch_variable import EpochVariable
from tx_keras.training.callbacks.mid_epoch_checkpoint import MidEpochCheckpoint
from tx_keras.training.callbacks.progress import Progress
from tx_keras.training.callbacks.step_budget import StepBudget
from tx_keras.training.callbacks.summary_barrier import SummaryBarrier
from tx_keras.training.callbacks.time_budget import CPU_SPENT_KEY, SPENT_KEY, TimeBudget
from tx_keras.training.callbacks.update_count import UpdateCount
from tx_keras.training.callbacks.validation_exact_match import LOG_KEY, ValidationExactMatch
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.step.learning_rate import Cooldown
from tx_keras.training.trainer_config import TrainerConfig


@dataclass
class RunCallbacks:
    """`fit`'s callbacks and the few the run asks afterwards why training stopped."""

    callbacks: list[keras.callbacks.Callback] = field(default_factory=list)
    stopper: EarlyStopping | None = None
    budget: TimeBudget | None = None  # trainer.max_train_minutes
    cpu_budget: TimeBudget | None = None  # trainer.max_train_cpu_minutes
    step_budget: StepBudget | None = None
    importance: keras.callbacks.Callback | None = None  # HeadImportanceAtEnd


def _dashboard(
    logging: LoggingConfig, trainer: TrainerConfig, run_dir: Path, task: Task, decode, fresh: bool
) -> list[keras.callbacks.Callback]:
    """TensorBoard curves plus our attention maps, translation samples and diagnostics (those before
    training only on a `fresh` start, not on a resume).

    Ours go to the run folder itself, next to the HParams row: a run is three entries in TensorBoard's
    run list (the run, train, validation), not one per kind of summary.
    """
    callbacks: list[keras.callbacks.Callback] = [EpochScalars(run_dir, logging.loss_every_steps)]
    if not tensorflow_installed():  # the rest are tf.summary images and text (run/without_tensorflow.py)
        return callbacks
    from tx_keras.training.callbacks import AttentionMaps, Diagnostics, Probes, TextSamples
    from tx_keras.training.callbacks.attention_maps import epochs_to_log

    epochs = epochs_to_log(logging.attention_maps, trainer.epochs)
    probes = Probes.from_task(task, logging.probes) if logging.probes else None
    if probes is not None and epochs:
        callbacks.append(AttentionMaps(run_dir, probes, epochs, logging.attention_tensors_mb))
        callbacks.append(TextSamples(run_dir, probes, task, decode, epochs))
    if logging.diagnostics_every:
        source, target = task.splits["train"]
        batch = slice(0, trainer.batch_size)
        inputs = (source[batch], target[batch, :-1])
        probe_inputs = None if probes is None else (probes.source, probes.decoder_input)
        callbacks.append(
            Diagnostics(run_dir, inputs, target[batch, 1:], logging.diagnostics_every, fresh, probe_inputs)
        )
    return callbacks


def _early_stopping(
    trainer: TrainerConfig, task: Task, decode, checkpoint: Checkpoint | None
) -> tuple[list[keras.callbacks.Callback], EarlyStopping | None]:
    """The stopper (None when `trainer.early_stopping.patience` is null), after the per-epoch validation
    exact-match when that is what it watches; its state comes back from the checkpoint on a resume."""
    settings = trainer.early_stopping
    if settings.patience is None:
        return [], None
    callbacks: list[keras.callbacks.Callback] = []
    if settings.monitor == LOG_KEY:
        source, target = task.splits["validation"]
        callbacks.append(ValidationExactMatch(decode, source, target, task.target_vocab))
    stopper = EarlyStopping(
        settings.monitor,
        settings.patience,
        trainer.epochs,
        settings.min_delta,
        settings.stop_at,
        state=checkpoint.logs if checkpoint else None,
    )
    return callbacks, stopper


def _spent(checkpoint: Checkpoint | None, key: str) -> float:
    """The minutes of a budget a resumed run spent before (its checkpoint's logs)."""
    return checkpoint.logs.get(key, 0.0) if checkpoint else 0.0


def assemble_callbacks(
    trainer: TrainerConfig,
    logging: LoggingConfig,
    run_dir: Path,
    task: Task,
    decode,
    checkpoint: Checkpoint | None,
    epoch,
    schedule: keras.optimizers.schedules.LearningRateSchedule,
    batches: EpochBatches,
    mid_epoch: MidEpochCheckpoint,
    train,
) -> RunCallbacks:
    """Every callback of the run's `fit`, in order: NaN guard and the epoch's data order first, validation
    exact-match before TensorBoard (so it becomes a validation curve), the stoppers, progress, then the
    epoch checkpoint once the epoch's points are on disk, and the mid-epoch checkpoint last of all. The
    update count comes before them all, so every epoch-end reader sees the optimizer's true step."""
    count = UpdateCount()
    run = RunCallbacks([count, keras.callbacks.TerminateOnNaN(), EpochVariable(epoch)])
    watchers, run.stopper = _early_stopping(trainer, task, decode, checkpoint)
    run.callbacks += watchers
    if logging.tensorboard:
        run.callbacks += _dashboard(logging, trainer, run_dir, task, decode, fresh=checkpoint is None)
    if run.stopper is not None:
        run.callbacks.append(run.stopper)
    if trainer.max_train_minutes:
        run.budget = TimeBudget(trainer.max_train_minutes, _spent(checkpoint, SPENT_KEY))
        run.callbacks.append(run.budget)
    if trainer.max_train_cpu_minutes:
        run.cpu_budget = TimeBudget.cpu(trainer.max_train_cpu_minutes, _spent(checkpoint, CPU_SPENT_KEY))
        run.callbacks.append(run.cpu_budget)
    clocked = run.budget or run.cpu_budget  # what the cool-down and progress follow (wall first)
    if trainer.max_steps:
        run.step_budget = StepBudget(trainer.max_steps, count)
        run.callbacks.append(run.step_budget)
    if isinstance(schedule, Cooldown):
        run.callbacks.append(
            CooldownClock(schedule, clocked, count, trainer.epochs, batches.steps, trainer.max_steps)
        )
    if logging.head_importance and tensorflow_installed():  # after training, before evaluation
        from tx_keras.training.callbacks.head_importance import ROWS, HeadImportanceAtEnd

        rows = slice(0, ROWS)
        source_rows, target_rows = (split[rows] for split in task.splits["validation"])
        first_rows = run_dataset(source_rows, target_rows, trainer, shuffle=False)
        run.importance = HeadImportanceAtEnd(run_dir, first_rows, len(source_rows), logging.tensorboard)
        run.callbacks.append(run.importance)
    run.callbacks.append(
        Progress(
            trainer.epochs,
            batches.steps,
            batches.tokens_per_step,
            logging.progress_every_s,
            sys.stderr.isatty(),
            logging.verbose,
            clocked,
            run.step_budget,
        )
    )
    if trainer.checkpoint_every:  # last: an epoch is checkpointed once its points are on disk
        run.callbacks.append(SummaryBarrier(run.callbacks))
        run.callbacks.append(
            EpochCheckpoint(run_dir / CHECKPOINT_PATH, trainer.checkpoint_every, trainer.epochs)
        )
    mid_epoch.watch(run.callbacks, train)
    run.callbacks.append(mid_epoch)  # last of all: stop signals, timed checkpoints, resuming inside an epoch
    return run
