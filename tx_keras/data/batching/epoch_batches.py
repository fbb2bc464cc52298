"""What a run's training split looks like as batches: epoch 0's bucketing, its padding share, steps per
epoch and real tokens per step (for the summary, the cooldown clock and the progress line)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tx_keras.data import Task
from tx_keras.data.batching.length_batches import length_batches, padding_fraction, row_lengths
from tx_keras.data.batching.shape_classes import shape_classes


@dataclass(frozen=True)
class EpochBatches:
    """Epoch 0's batches of the training split under a config (a token budget varies the count by a few
    from epoch to epoch: epoch 0's stands for all)."""

    steps: int  # batches per epoch
    padding: float  # the share of padding positions in them
    tokens_per_step: float  # real (non-padding) source and target tokens per step

    @classmethod
    def of(cls, task: Task, trainer: Any, seed: int) -> EpochBatches:
        """`trainer`: the run's TrainerConfig (training/trainer_config.py); `seed`: the run's."""
        if task.train_stream is not None:  # estimated from the stream's sample
            steps, padding, tokens = task.train_stream.epoch_estimate(
                trainer.batch_size, trainer.batch_tokens, trainer.batching, seed
            )
            return cls(steps=steps, padding=padding, tokens_per_step=tokens)
        source, target = task.splits["train"]
        classes = shape_classes(trainer)
        batches = None  # fixed batching: every batch `batch_size` rows
        if trainer.batching != "fixed":
            lengths = np.maximum(row_lengths(source), row_lengths(target))
            batches = length_batches(lengths, trainer.batch_size, trainer.batch_tokens, seed, 0, classes)
        steps = len(batches) if batches is not None else -(-len(source) // trainer.batch_size)
        padding = padding_fraction(source, target, batches, trainer.batch_size, trainer.batch_tokens, classes)
        return cls(
            steps=steps,
            padding=round(padding, 4),
            tokens_per_step=(np.count_nonzero(source) + np.count_nonzero(target)) / max(steps, 1),
        )
