"""What one `fit` did, as the summary says it: epochs, time, training scores and why it stopped."""

from __future__ import annotations

from typing import Any

import keras

from tx_keras.run_folder.checkpoint import Checkpoint
from tx_keras.run_folder.summary import STEP_BUDGET
from tx_keras.training.callbacks.run_callbacks import RunCallbacks
from tx_keras.training.trainer_config import TrainerConfig


def fit_outcome(
    trainer: TrainerConfig,
    history: keras.callbacks.History,
    initial_epoch: int,
    checkpoint: Checkpoint | None,
    stopped_before: bool,
    run: RunCallbacks,
) -> tuple[int, dict[str, float], dict[str, Any]]:
    """(epochs trained in all, training metrics, the summary fields on stopping and head importance).

    A resume that trains nothing (it stopped before it was killed) takes its metrics from the checkpoint.
    """
    trained = history.history.get("loss", [])
    epochs = initial_epoch + len(trained)
    last = {key: values[-1] for key, values in history.history.items()} if trained else checkpoint.logs
    metrics = {"train_loss": float(last["loss"]), "train_accuracy": float(last["accuracy"])}
    fields: dict[str, Any] = {}
    if run.importance is not None and run.importance.record is not None:
        fields["head_importance"] = run.importance.record
    if run.cpu_budget is not None:  # beside the wall figures (train_time_s, train_cpu_s)
        fields["cpu_budget"] = {
            "max_train_cpu_minutes": trainer.max_train_cpu_minutes,
            "cpu_minutes_used": round(run.cpu_budget.elapsed() / 60.0, 3),
        }
    if run.budget and run.budget.reached:
        fields["stopped_by"] = f"time budget: trainer.max_train_minutes={trainer.max_train_minutes:g}"
    elif run.cpu_budget and run.cpu_budget.reached:
        fields["stopped_by"] = (
            f"CPU-time budget: trainer.max_train_cpu_minutes={trainer.max_train_cpu_minutes:g}"
        )
    elif run.step_budget and run.step_budget.reached:
        fields["stopped_by"] = f"{STEP_BUDGET}: trainer.max_steps={trainer.max_steps}"
    elif run.stopper is not None and run.stopper.reason:
        fields["stopped_by"] = run.stopper.reason
    elif stopped_before and step_budget_spent(trainer, checkpoint):
        budget = f"{STEP_BUDGET}: trainer.max_steps={trainer.max_steps}"
        fields["stopped_by"] = f"{budget} (before this resume)"
    elif stopped_before:
        fields["stopped_by"] = f"early stopping after epoch {epochs} (before this resume)"
    return epochs, metrics, fields


def step_budget_spent(trainer: TrainerConfig, checkpoint: Checkpoint | None) -> bool:
    """Whether `checkpoint` has taken `trainer.max_steps` updates already: a resume has nothing to train
    (Keras' `fit` takes a step before a callback can stop it)."""
    return bool(trainer.max_steps and checkpoint and checkpoint.step >= trainer.max_steps)
