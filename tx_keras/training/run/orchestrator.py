"""One training run: config -> task -> model -> fit with TensorBoard -> evaluate -> export -> summary.json.

`run(config, run_dir)` is what `tx-train`'s job calls once per job (and a sweeper once per sweep job),
with the typed config the job checked; it returns the metric `trainer.objective` names, which an
optimising sweeper (sweeps/sweep/optuna.yaml) uses. Each step is a function in a module of its own,
given the config group it reads: model_build, run_callbacks, fit_outcome, evaluation, export, run_record.
"""

from __future__ import annotations

import time
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import keras
import numpy as np

from tx_keras.data import Task, build_task
from tx_keras.data.batching.epoch_batches import EpochBatches
from tx_keras.data.batching.input_batches import pipeline_counter, run_dataset
from tx_keras.data.task_config import TaskConfig
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.evaluation import evaluate_run
from tx_keras.export.run_export import save_and_export
from tx_keras.models import Transformer
from tx_keras.models.row_parts_step import row_parts
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, Checkpoint, restore
from tx_keras.run_folder.disk_fault import disk_fault
from tx_keras.run_folder.resume import start_or_resume
from tx_keras.runtime.cpu_share import CpuClock
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced
from tx_keras.runtime.tensorflow_presence import tensorflow_installed
from tx_keras.training.callbacks.early_stopping import STOPPED_KEY
from tx_keras.training.callbacks.mid_epoch_checkpoint import MidEpochCheckpoint
from tx_keras.training.callbacks.run_callbacks import assemble_callbacks
from tx_keras.training.run import without_tensorflow
from tx_keras.training.run.determinism import make_deterministic
from tx_keras.training.run.fit_outcome import fit_outcome, step_budget_spent
from tx_keras.training.run.model_build import build_and_compile
from tx_keras.training.run.record import record_run
from tx_keras.training.run.run_config import RunConfig
from tx_keras.training.run.stage import stage
from tx_keras.user_error import ConfigError, UserError


def _read_task(data: TaskConfig) -> Task:
    """The `data` group's task; a task the config cannot produce is a config error, in one line."""
    try:
        with stage(f"data: {data.name} (reading, splitting, vocabularies)"):
            return build_task(data)
    except UserError:  # already one line naming the key, e.g. a corpus file that does not exist
        raise
    except ValueError as error:  # e.g. more sentences than exist
        raise ConfigError(f"data: {error}") from None


def _fit(
    config: RunConfig,
    run_dir: Path,
    task: Task,
    model: Transformer,
    schedule,
    decode,
    checkpoint: Checkpoint | None,
) -> dict[str, Any]:
    """`fit` from scratch or from `checkpoint`, with every callback; returns the summary fields it knows."""
    initial_epoch = checkpoint.epoch if checkpoint else 0
    epoch = pipeline_counter(initial_epoch)  # picks each epoch's data order
    trainer = config.trainer
    minutes = trainer.checkpoint_every_minutes
    enabled = bool(trainer.checkpoint_every or minutes)
    mid_epoch = MidEpochCheckpoint(run_dir / CHECKPOINT_PATH, checkpoint, minutes, enabled)
    batches = EpochBatches.of(task, trainer, config.seed)
    left_out = None  # streamed corpora: training pairs wider than the padded widths, left out
    if task.train_stream is not None:  # a streamed corpus (data.stream=true); tf.data, so TensorFlow
        import tensorflow as tf

        from tx_keras.data.batching.streamed_batches import LeftOutReport, streamed_batches

        left_out = tf.Variable(0, dtype=tf.int64, trainable=False)
        train = streamed_batches(
            task.train_stream, trainer, config.seed, epoch, mid_epoch.skip, batches.steps, left_out
        )
    else:
        source, target = task.splits["train"]
        train = run_dataset(
            source, target, trainer, shuffle=True, seed=config.seed, epoch=epoch, skip=mid_epoch.skip
        )
    validation = run_dataset(*task.splits["validation"], trainer, shuffle=False)
    run = assemble_callbacks(
        trainer, config.logging, run_dir, task, decode, checkpoint, epoch, schedule, batches, mid_epoch, train
    )
    if left_out is not None:
        run.callbacks.append(LeftOutReport(left_out, task.train_stream))
    # killed after it stopped (early stopping, or the step budget spent): fit trains nothing more
    stopped = bool(checkpoint and checkpoint.logs.get(STOPPED_KEY))
    stopped_before = stopped or step_budget_spent(trainer, checkpoint)
    fit_clock = CpuClock()  # the training phase (with its per-epoch validation): time and cores kept busy
    with epoch_end_warning_silenced():
        history = model.fit(
            train,
            validation_data=validation,
            initial_epoch=initial_epoch,
            epochs=initial_epoch if stopped_before else trainer.epochs,
            callbacks=run.callbacks,
            shuffle=False,  # the dataset shuffles itself, seeded
            verbose=0,  # Progress reports instead (a bar in a terminal, a line every ~30 s in a log)
        )
    fit_cpu = fit_clock.share()
    epochs, metrics, stopping = fit_outcome(trainer, history, initial_epoch, checkpoint, stopped_before, run)
    return {
        "task": task.name,
        "parameters": int(model.count_params()),
        "precision": model.dtype_policy.name,  # what trainer.precision (auto by default) became here
        "step_parts": row_parts(model),  # what trainer.step_parts (auto) became: the thread pools' choice
        "epochs": epochs,
        "optimizer_steps": int(np.asarray(model.optimizer.iterations)),  # the unit of trainer.max_steps
        "train_time_s": round(fit_cpu.wall_s, 2),
        **fit_cpu.fields(),  # train_cpu_s, cpu_per_wall, cores
        "data": {**task.report, "padding_fraction": batches.padding, **_left_out(left_out)},
        **stopping,
        "metrics": metrics,
    }


def _left_out(left_out) -> dict[str, int]:
    """A streamed run's count of training pairs left out for their width (over the passes it streamed)."""
    return {} if left_out is None else {"stream_left_out_wide_pairs": int(left_out.numpy())}


def _example_source(task: Task) -> str:
    """A test sentence to show in the end-of-run report's `tx-translate` command."""
    if task.is_text:
        return task.texts("test")[0][0]
    return task.detokenize_source(task.splits["test"][0][0])


def _train_and_evaluate(config: RunConfig, run_dir: Path, checkpoint: Checkpoint | None) -> dict[str, Any]:
    """The run proper, from scratch or from `checkpoint`: build, fit, evaluate, export. Returns the summary
    fields it knows (status, metrics, size, epochs)."""
    keras.utils.set_random_seed(config.seed)
    if config.trainer.deterministic:
        make_deterministic()  # same config -> bit-identical losses and weights
    task = _read_task(config.data)
    model, schedule = build_and_compile(config.model, config.trainer, task)
    if checkpoint:
        restore(model, checkpoint, run_dir / CHECKPOINT_PATH)
    decode = cached_greedy_decoder(model, task.target_length - 1)  # == greedy_decoder, faster (tests)
    fields = _fit(config, run_dir, task, model, schedule, decode, checkpoint)
    metrics = fields.pop("metrics")
    if not np.isfinite(metrics["train_loss"]):
        reason = f"loss became {metrics['train_loss']} in epoch {fields['epochs']}"
        return {**fields, "status": "diverged", "reason": reason, "metrics": metrics}

    def batches(split: str):
        """A split's teacher-forced batches as fit's validation reads them (padded for the replicas)."""
        return run_dataset(*task.splits[split], config.trainer, shuffle=False)

    splits = "validation and test splits" if config.export.evaluate_test else "validation split"
    with stage(f"evaluation: decoding the {splits}"):
        evaluation = evaluate_run(model, task, decode, batches, config.export, run_dir)
    metrics.update(evaluation.metrics)
    fields.update(evaluation.fields())  # evaluation_minutes; with length_penalty=auto the validation choice
    export = replace(config.export, length_penalty=evaluation.length_penalty)  # what the figures used
    exporting = export.enabled and tensorflow_installed()  # a SavedModel is a TensorFlow graph
    with stage("export: SavedModel" if exporting else "saving the model"):
        fields.update(save_and_export(run_dir, model, task, export))
    fields["example_source"] = _example_source(task)
    return {**fields, "status": "completed", "metrics": metrics}


def run(config: RunConfig, run_dir: Path) -> float:
    """Train and evaluate one configuration; writes event files and summary.json into `run_dir`.

    A run that raises is recorded as `failed` (with the reason) before the error propagates; one whose
    loss turns NaN/inf stops early and is recorded as `diverged`. Returns the validation exact-match
    named by `trainer.objective` (NaN unless completed) for an optimising sweeper. The config is checked
    by the caller, once (tx_keras/training/run/job.py).
    """
    started = time.perf_counter()
    summary: dict[str, Any] = {
        "tx_keras_version": version("tx_keras"),
        "config": config.as_dict(),
    }
    # a folder that cannot be continued fails here, untouched
    checkpoint = start_or_resume(summary["config"], config.trainer.epochs, run_dir)
    if not tensorflow_installed():  # what this run writes instead, and what it leaves out
        summary["without_tensorflow"] = without_tensorflow.record(config.logging, config.export, run_dir)
    try:
        summary.update(_train_and_evaluate(config, run_dir, checkpoint))
    except Exception as error:  # recorded, then re-raised: a crash must not look like a missing run
        if disk_fault(error, run_dir) is not None:
            raise  # the disk refuses this folder's writes: recording it there would fail the same way
        summary.update(status="failed", reason=f"{type(error).__name__}: {error}")
        record_run(config.logging, run_dir, summary, started)
        raise
    record_run(config.logging, run_dir, summary, started)
    objective = config.trainer.objective
    return float(summary["metrics"][objective]) if summary["status"] == "completed" else float("nan")
