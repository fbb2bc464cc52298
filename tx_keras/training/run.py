"""One training run: config -> task -> model -> fit with TensorBoard -> evaluate -> summary.json.

`run(cfg, run_dir)` is what `tx-train` calls once per job (and a sweeper once per sweep job); it
returns the metric `trainer.objective` names, which an optimising sweeper (sweeps/sweep/optuna.yaml) uses.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from omegaconf import DictConfig, OmegaConf

import tx_keras
from tx_keras.config_check import ConfigError
from tx_keras.data import Task, build_task, make_dataset
from tx_keras.data.length_batches import length_batches, padding_fraction, row_lengths
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.evaluation import evaluate_run
from tx_keras.export.run_export import save_and_export
from tx_keras.models import ModelConfig, Transformer
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, Checkpoint, restore
from tx_keras.run_folder.resume import start_or_resume
from tx_keras.run_folder.summary import write_summary
from tx_keras.training.callbacks import AttentionMaps, Diagnostics, Probes, TextSamples
from tx_keras.training.callbacks.attention_maps import epochs_to_log
from tx_keras.training.callbacks.cooldown_clock import CooldownClock
from tx_keras.training.callbacks.early_stopping import STOPPED_KEY, EarlyStopping
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint
from tx_keras.training.callbacks.epoch_scalars import EpochScalars
from tx_keras.training.callbacks.epoch_variable import EpochVariable
from tx_keras.training.callbacks.head_importance import ROWS, HeadImportanceAtEnd
from tx_keras.training.callbacks.progress import Progress
from tx_keras.training.callbacks.summary_barrier import SummaryBarrier
from tx_keras.training.callbacks.time_budget import SPENT_KEY, TimeBudget
from tx_keras.training.callbacks.validation_exact_match import LOG_KEY, ValidationExactMatch
from tx_keras.training.hparams import write_hparams
from tx_keras.training.learning_rate import Cooldown
from tx_keras.training.model_compile import compile_model
from tx_keras.training.precision import precision_policy
from tx_keras.training.stage import stage
from tx_keras.user_error import UserError


def build_model(cfg: DictConfig, task: Task) -> Transformer:
    """The Transformer the `model` config group describes, sized to the task's vocabularies and lengths."""
    return Transformer(
        ModelConfig(**OmegaConf.to_container(cfg.model, resolve=True)),
        source_vocab_size=len(task.source_vocab),
        target_vocab_size=len(task.target_vocab),
        max_source_length=task.source_length,
        max_target_length=task.target_length - 1,  # the decoder reads SOS..last word, never the final EOS
    )


def _dataset(source, target, trainer: DictConfig, shuffle: bool, **kwargs) -> tf.data.Dataset:
    """make_dataset with the trainer's batch size and batching."""
    return make_dataset(
        source,
        target,
        trainer.batch_size,
        shuffle=shuffle,
        batching=trainer.batching,
        batch_tokens=trainer.batch_tokens,
        **kwargs,
    )


def _metric_tag(name: str) -> str:
    """`test_exact_match` -> `final/test_exact_match`: one Scalars group, after Keras' `epoch_*` curves."""
    return f"final/{name}"


def _log_final(run_dir: Path, metrics: dict[str, float], step: int) -> None:
    """Final metrics as scalars in the run folder itself: the HParams metric columns and the Scalars tab."""
    with tf.summary.create_file_writer(str(run_dir)).as_default(), tf.summary.record_if(True):
        for name, value in metrics.items():
            tf.summary.scalar(_metric_tag(name), value, step=step)


def _dashboard(
    cfg: DictConfig, run_dir: Path, task: Task, decode, initial_epoch: int
) -> list[keras.callbacks.Callback]:
    """TensorBoard curves plus our attention maps, translation samples and diagnostics.

    Ours go to the run folder itself, next to the HParams row: a run is three entries in TensorBoard's
    run list (the run, train, validation), not one per kind of summary.
    """
    logging = cfg.logging
    callbacks: list[keras.callbacks.Callback] = [EpochScalars(run_dir, logging.loss_every_steps)]
    epochs = epochs_to_log(logging.attention_maps, cfg.trainer.epochs)
    probes = Probes.from_task(task, logging.probes) if logging.probes else None
    if probes is not None and epochs:
        callbacks.append(AttentionMaps(run_dir, probes, epochs, logging.attention_tensors_mb))
        callbacks.append(TextSamples(run_dir, probes, task, decode, epochs))
    if logging.diagnostics_every:
        source, target = task.splits["train"]
        batch = slice(0, cfg.trainer.batch_size)
        inputs = (source[batch], target[batch, :-1])
        probe_inputs = None if probes is None else (probes.source, probes.decoder_input)
        callbacks.append(
            Diagnostics(
                run_dir, inputs, target[batch, 1:], logging.diagnostics_every, initial_epoch, probe_inputs
            )
        )
    return callbacks


def _first_epoch_batches(task: Task, cfg: DictConfig) -> list[np.ndarray] | None:
    """The training split's row indices per batch in epoch 0 as bucketed by this config; None for
    fixed batching (every batch `batch_size` rows)."""
    if cfg.trainer.batching == "fixed":
        return None
    source, target = task.splits["train"]
    lengths = np.maximum(row_lengths(source), row_lengths(target))
    return length_batches(lengths, cfg.trainer.batch_size, cfg.trainer.batch_tokens, cfg.seed, 0)


def _padding(task: Task, batches: list[np.ndarray] | None) -> float:
    """The share of padding in the training batches of the first epoch."""
    return round(padding_fraction(*task.splits["train"], batches), 4)


def _steps_per_epoch(task: Task, cfg: DictConfig, batches: list[np.ndarray] | None) -> int:
    """Batches per epoch (a token budget varies it by a few from epoch to epoch: epoch 0's count)."""
    return len(batches) if batches is not None else -(-len(task.splits["train"][0]) // cfg.trainer.batch_size)


def _early_stopping(
    cfg: DictConfig, task: Task, decode, checkpoint: Checkpoint | None
) -> tuple[list[keras.callbacks.Callback], EarlyStopping | None]:
    """The stopper (None when `trainer.early_stopping.patience` is null), after the per-epoch validation
    exact-match when that is what it watches; its state comes back from the checkpoint on a resume."""
    settings = cfg.trainer.early_stopping
    if settings.patience is None:
        return [], None
    callbacks: list[keras.callbacks.Callback] = []
    if settings.monitor == LOG_KEY:
        source, target = task.splits["validation"]
        callbacks.append(ValidationExactMatch(decode, source, target, task.target_vocab))
    stopper = EarlyStopping(
        settings.monitor,
        settings.patience,
        cfg.trainer.epochs,
        settings.min_delta,
        settings.stop_at,
        state=checkpoint.logs if checkpoint else None,
    )
    return callbacks, stopper


def _tokens_per_step(task: Task, steps: int) -> float:
    """Real (non-padding) source and target tokens per training step, for the progress line's tokens/s."""
    source, target = task.splits["train"]
    return (np.count_nonzero(source) + np.count_nonzero(target)) / max(steps, 1)


def _example_source(task: Task) -> str:
    """A test sentence to show in the end-of-run report's `tx-translate` command."""
    if task.is_text:
        return task.texts("test")[0][0]
    return task.detokenize_source(task.splits["test"][0][0])


def _train_and_evaluate(cfg: DictConfig, run_dir: Path, checkpoint: Checkpoint | None) -> dict[str, Any]:
    """The run proper, from scratch or from `checkpoint`; returns the summary fields it knows (status,
    metrics, size, epochs)."""
    keras.utils.set_random_seed(cfg.seed)
    if cfg.trainer.deterministic:
        tf.config.experimental.enable_op_determinism()  # same config -> bit-identical losses and weights
    try:
        with stage(f"data: {cfg.data.name} (reading, splitting, vocabularies)"):
            task = build_task(cfg.data)
    except UserError:  # already one line naming the key, e.g. a corpus file that does not exist
        raise
    except ValueError as error:  # a task the config cannot produce, e.g. more sentences than exist
        raise ConfigError(f"data: {error}") from None
    with precision_policy(cfg.trainer.precision):  # per run: sweep jobs share the global policy
        model = build_model(cfg, task)
    schedule = compile_model(model, cfg.trainer)
    source, target = task.splits["train"]
    model((source[:1], target[:1, :-1]))  # create the weights now, fresh or resumed alike
    # And the optimizer's slots: created inside the first traced step instead, they make TensorFlow lift
    # each one out of the graph and trace the step twice (a tiny run's first epoch: ~18 s -> 12 s).
    model.optimizer.build(model.trainable_variables)
    initial_epoch = checkpoint.epoch if checkpoint else 0
    if checkpoint:
        restore(model, checkpoint, run_dir / CHECKPOINT_PATH)
    decode = cached_greedy_decoder(model, task.target_length - 1)  # == greedy_decoder, faster (tests)
    epoch = tf.Variable(initial_epoch, dtype=tf.int64, trainable=False)  # picks each epoch's data order
    train = _dataset(source, target, cfg.trainer, shuffle=True, seed=cfg.seed, epoch=epoch)
    validation = _dataset(*task.splits["validation"], cfg.trainer, shuffle=False)
    callbacks: list[keras.callbacks.Callback] = [keras.callbacks.TerminateOnNaN(), EpochVariable(epoch)]
    watchers, stopper = _early_stopping(cfg, task, decode, checkpoint)
    callbacks += watchers  # before TensorBoard: val_exact_match becomes a validation curve
    if cfg.logging.tensorboard:
        callbacks += _dashboard(cfg, run_dir, task, decode, initial_epoch)
    if stopper is not None:
        callbacks.append(stopper)
    budget = None
    if cfg.trainer.max_train_minutes:
        spent = checkpoint.logs.get(SPENT_KEY, 0.0) if checkpoint else 0.0
        budget = TimeBudget(cfg.trainer.max_train_minutes, spent)
        callbacks.append(budget)
    batches = _first_epoch_batches(task, cfg)
    steps = _steps_per_epoch(task, cfg, batches)
    if isinstance(schedule, Cooldown):
        callbacks.append(CooldownClock(schedule, budget, cfg.trainer.epochs, steps))
    importance = None
    if cfg.logging.get("head_importance"):  # after training, before the evaluation: the model as trained
        rows = slice(0, ROWS)
        source_rows, target_rows = (split[rows] for split in task.splits["validation"])
        first_rows = _dataset(source_rows, target_rows, cfg.trainer, shuffle=False)
        importance = HeadImportanceAtEnd(run_dir, first_rows, len(source_rows), cfg.logging.tensorboard)
        callbacks.append(importance)
    terminal = sys.stderr.isatty()
    progress = Progress(
        cfg.trainer.epochs,
        steps,
        _tokens_per_step(task, steps),
        cfg.logging.progress_every_s,
        terminal,
        cfg.logging.verbose,
        budget,
    )
    callbacks.append(progress)
    if cfg.trainer.checkpoint_every:  # last: an epoch is checkpointed once its points are on disk
        callbacks.append(SummaryBarrier(callbacks))
        callbacks.append(
            EpochCheckpoint(run_dir / CHECKPOINT_PATH, cfg.trainer.checkpoint_every, cfg.trainer.epochs)
        )
    stopped_before = bool(checkpoint and checkpoint.logs.get(STOPPED_KEY))  # killed after it stopped
    fit_started = time.perf_counter()
    history = model.fit(
        train,
        validation_data=validation,
        initial_epoch=initial_epoch,
        epochs=initial_epoch if stopped_before else cfg.trainer.epochs,
        callbacks=callbacks,
        shuffle=False,  # the dataset shuffles itself, seeded
        verbose=0,  # Progress reports instead (a bar in a terminal, a line every ~30 s in a log)
    )
    train_time_s = round(time.perf_counter() - fit_started, 2)
    trained = history.history.get("loss", [])
    epochs = initial_epoch + len(trained)
    last = {key: values[-1] for key, values in history.history.items()} if trained else checkpoint.logs
    metrics = {"train_loss": float(last["loss"]), "train_accuracy": float(last["accuracy"])}
    fields: dict[str, Any] = {
        "task": task.name,
        "parameters": int(model.count_params()),
        "epochs": epochs,
        "train_time_s": train_time_s,
        "data": {**task.report, "padding_fraction": _padding(task, batches)},
    }
    if importance is not None and importance.record is not None:
        fields["head_importance"] = importance.record
    if budget and budget.reached:
        fields["stopped_by"] = f"time budget: trainer.max_train_minutes={cfg.trainer.max_train_minutes}"
    elif stopper is not None and stopper.reason:
        fields["stopped_by"] = stopper.reason
    elif stopped_before:
        fields["stopped_by"] = f"early stopping after epoch {epochs} (before this resume)"
    if not np.isfinite(metrics["train_loss"]):
        return {
            **fields,
            "status": "diverged",
            "reason": f"loss became {metrics['train_loss']} in epoch {epochs}",
            "metrics": metrics,
        }
    with stage("evaluation: decoding the validation and test splits"):
        evaluation = evaluate_run(model, task, decode, cfg.trainer, cfg.export, run_dir)
    metrics.update(evaluation.metrics)
    fields.update(evaluation.fields())  # evaluation_minutes; with length_penalty=auto the validation choice
    export = {**cfg.export, "length_penalty": evaluation.length_penalty}  # what the figures used
    with stage("export: SavedModel" if cfg.export.enabled else "saving the model"):
        fields.update(save_and_export(run_dir, model, task, export))
    fields["example_source"] = _example_source(task)
    return {**fields, "status": "completed", "metrics": metrics}


def _record(cfg: DictConfig, run_dir: Path, summary: dict[str, Any], started: float) -> None:
    """summary.json, plus the final scalars and the HParams row (with its status) when logging is on."""
    summary["wall_time_s"] = round(time.perf_counter() - started, 2)
    metrics = summary.setdefault("metrics", {})
    if cfg.logging.tensorboard:
        _log_final(run_dir, metrics, summary.get("epochs", 0))
        write_hparams(run_dir, cfg, summary["status"], [_metric_tag(name) for name in metrics])
    write_summary(run_dir, summary)


def run(cfg: DictConfig, run_dir: Path) -> float:
    """Train and evaluate one configuration; writes event files and summary.json into `run_dir`.

    A run that raises is recorded as `failed` (with the reason) before the error propagates; one whose
    loss turns NaN/inf stops early and is recorded as `diverged`. Returns the validation exact-match
    named by `trainer.objective` (NaN unless completed) for an optimising sweeper. The config is checked
    by the caller, once (tx_keras/training/job.py).
    """
    started = time.perf_counter()
    summary: dict[str, Any] = {
        "tx_keras_version": tx_keras.__version__,
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
    checkpoint = start_or_resume(cfg, run_dir)  # a folder that cannot be continued fails here, untouched
    try:
        summary.update(_train_and_evaluate(cfg, run_dir, checkpoint))
    except Exception as error:  # recorded, then re-raised: a crash must not look like a missing run
        summary.update(status="failed", reason=f"{type(error).__name__}: {error}")
        _record(cfg, run_dir, summary, started)
        raise
    _record(cfg, run_dir, summary, started)
    return (
        float(summary["metrics"][cfg.trainer.objective]) if summary["status"] == "completed" else float("nan")
    )
