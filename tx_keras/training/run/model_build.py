"""The model a run trains: the `model` config group sized to the task, compiled, its weights and optimizer
slots created before the first step."""

from __future__ import annotations

import keras

from tx_keras.data import Task
from tx_keras.models import ModelConfig, Transformer
from tx_keras.runtime.compiled_step import step_is_compiled
from tx_keras.training.step.model_compile import compile_model
from tx_keras.training.step.precision import precision_policy
from tx_keras.training.trainer_config import TrainerConfig


def build_model(model: ModelConfig, task: Task) -> Transformer:
    """The Transformer the `model` config group describes, sized to the task's vocabularies and lengths."""
    return Transformer(
        model,
        source_vocab_size=len(task.source_vocab),
        target_vocab_size=len(task.target_vocab),
        max_source_length=task.source_length,
        max_target_length=task.target_length - 1,  # the decoder reads SOS..last word, never the final EOS
    )


def build_and_compile(
    model_config: ModelConfig, trainer: TrainerConfig, task: Task
) -> tuple[Transformer, keras.optimizers.schedules.LearningRateSchedule]:
    """`build_model` under the run's precision, compiled, with its weights and optimizer slots made now.

    The weights exist before a checkpoint is restored into them, fresh or resumed alike. The optimizer's
    slots too: created inside the first traced step instead, they make TensorFlow lift each one out of the
    graph and trace the step twice (a tiny run's first epoch: ~18 s -> 12 s). Returns the model and its
    learning-rate schedule.
    """
    # per run: sweep jobs share the global policy
    with precision_policy(trainer.precision, step_is_compiled(trainer)):
        model = build_model(model_config, task)
    schedule = compile_model(model, trainer)
    source, target = task.splits["train"]
    model((source[:1], target[:1, :-1]))
    model.optimizer.build(model.trainable_variables)
    return model, schedule
