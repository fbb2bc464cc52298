"""One training run: config -> task -> model -> fit with TensorBoard -> evaluate -> summary.json.

`run(cfg, run_dir)` is what `tx-train` calls once per job (and a sweeper once per sweep job); it
returns the validation exact-match so an optimising sweeper can maximise it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from omegaconf import DictConfig, OmegaConf

import tx_keras
from tx_keras.config_check import check_config
from tx_keras.data import Task, build_task, make_dataset
from tx_keras.decoding import decode_in_batches, exact_match, greedy_decoder
from tx_keras.models import Transformer
from tx_keras.training.masked_accuracy import MaskedAccuracy
from tx_keras.training.masked_loss import MaskedCrossEntropy
from tx_keras.training.schedule import NoamSchedule
from tx_keras.training.summary import write_summary

# The key an optimising sweeper maximises (see sweeps/).
OBJECTIVE = "validation_exact_match"


def build_model(cfg: DictConfig, task: Task) -> Transformer:
    """The Transformer the `model` config group describes, sized to the task's vocabularies and lengths."""
    return Transformer(
        source_vocab_size=len(task.source_vocab),
        target_vocab_size=len(task.target_vocab),
        max_source_length=task.source_length,
        max_target_length=task.target_length - 1,  # the decoder reads SOS..last word, never the final EOS
        **OmegaConf.to_container(cfg.model),
    )


def compile_model(model: Transformer, trainer: DictConfig) -> NoamSchedule:
    """Adam(0.9, 0.98, 1e-9) on the Noam schedule, masked loss and accuracy, optional clipping."""
    schedule = NoamSchedule(model.d_model, trainer.warmup_steps, trainer.lr_scale)
    optimizer = keras.optimizers.Adam(
        schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9, global_clipnorm=trainer.clip_norm
    )
    model.compile(
        optimizer=optimizer, loss=MaskedCrossEntropy(trainer.label_smoothing), metrics=[MaskedAccuracy()]
    )
    return schedule


class LearningRateLogger(keras.callbacks.Callback):
    """Adds the current learning rate to each epoch's logs, so TensorBoard plots it beside the loss."""

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            optimizer = self.model.optimizer
            logs["learning_rate"] = float(optimizer.learning_rate)


def _evaluate(model: Transformer, task: Task, batch_size: int) -> dict[str, float]:
    """Teacher-forced loss/accuracy and greedy-decoding exact-match on validation and test."""
    metrics: dict[str, float] = {}
    decode = greedy_decoder(model, task.target_length - 1)
    for split in ("validation", "test"):
        source, target = task.splits[split]
        loss, accuracy = model.evaluate(make_dataset(source, target, batch_size, shuffle=False), verbose=0)
        predicted = decode_in_batches(decode, source)
        metrics[f"{split}_loss"] = float(loss)
        metrics[f"{split}_accuracy"] = float(accuracy)
        metrics[f"{split}_exact_match"] = exact_match(predicted, target, task.target_vocab)
    return metrics


def _log_final(run_dir: Path, metrics: dict[str, float], step: int) -> None:
    """Final metrics as scalars under run_dir/final, so runs compare in the Scalars tab too."""
    with tf.summary.create_file_writer(str(run_dir / "final")).as_default(), tf.summary.record_if(True):
        for name, value in metrics.items():
            tf.summary.scalar(name.replace("_", "/", 1), value, step=step)


def run(cfg: DictConfig, run_dir: Path) -> float:
    """Train and evaluate one configuration; writes event files and summary.json into `run_dir`."""
    check_config(cfg)
    started = time.perf_counter()
    keras.utils.set_random_seed(cfg.seed)
    task = build_task(cfg.data)
    model = build_model(cfg, task)
    compile_model(model, cfg.trainer)
    train = make_dataset(*task.splits["train"], cfg.trainer.batch_size, shuffle=True, seed=cfg.seed)
    validation = make_dataset(*task.splits["validation"], cfg.trainer.batch_size, shuffle=False)
    callbacks: list[keras.callbacks.Callback] = [LearningRateLogger()]
    if cfg.logging.tensorboard:
        callbacks.append(
            keras.callbacks.TensorBoard(
                log_dir=str(run_dir), update_freq="epoch", write_graph=False, profile_batch=0
            )
        )
    history = model.fit(
        train,
        validation_data=validation,
        epochs=cfg.trainer.epochs,
        callbacks=callbacks,
        shuffle=False,
        verbose=cfg.logging.verbose,
    )  # the dataset shuffles itself, seeded
    metrics = {
        "train_loss": float(history.history["loss"][-1]),
        "train_accuracy": float(history.history["accuracy"][-1]),
        **_evaluate(model, task, cfg.trainer.batch_size),
    }
    if cfg.logging.tensorboard:
        _log_final(run_dir, metrics, cfg.trainer.epochs)
    summary: dict[str, Any] = {
        "status": "completed",
        "tx_keras_version": tx_keras.__version__,
        "task": task.name,
        "metrics": metrics,
        "parameters": int(model.count_params()),
        "epochs": cfg.trainer.epochs,
        "wall_time_s": round(time.perf_counter() - started, 2),
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
    write_summary(run_dir, summary)
    return float(metrics[OBJECTIVE]) if np.isfinite(metrics[OBJECTIVE]) else float("nan")
