"""The training batches of a streamed corpus (data.stream=true) as a run feeds them to `fit`, data parallel
included, and the count of training pairs the stream left out for being wider than the padded widths."""

from __future__ import annotations

import logging
from typing import Any

import keras
import tensorflow as tf

from tx_keras.data.batching.input_batches import process_slot, replica_count
from tx_keras.data.batching.train_stream import TrainStream

log = logging.getLogger(__name__)


def streamed_batches(
    stream: TrainStream, trainer: Any, seed: int, epoch, skip, steps: int, left_out: tf.Variable
) -> tf.data.Dataset:
    """`steps` batches an epoch from `stream`, in the order (seed, epoch) draws.

    Several processes: with fixed batching each reads its own shard (every n-th line of each part) and
    batches its share of the global batch (one shape everywhere: the padded widths). With bucketed batching
    each process streams the whole corpus and keeps its share of each batch, as in memory: the processes'
    batches must have one shape per step, and their own shards would bucket differently. Every process runs
    the same `steps` a epoch, which the sample decides (train_stream.epoch_steps), not its shard's pass.
    """
    index, count = process_slot()
    replicas = replica_count()
    fixed = trainer.batching == "fixed"
    if count > 1 and fixed:
        rows = trainer.batch_size // count
        log.info("streamed corpus: process %d of %d streams its shard, %d rows a batch", index, count, rows)
        mine = stream.shard(index, count).dataset(
            rows, None, "fixed", seed, epoch, skip, steps=steps, left_out=left_out
        )
        from tx_keras.data.batching.replica_batches import padded_rows

        return padded_rows(mine, rows)  # a pass's last batch is short
    batch = (trainer.batch_size, trainer.batch_tokens, trainer.batching)
    dataset = stream.dataset(*batch, seed, epoch, skip, steps=steps, left_out=left_out)
    if replicas == 1:
        return dataset
    from tx_keras.data.batching.replica_batches import padded_rows, process_share

    dataset = padded_rows(dataset, trainer.batch_size if fixed else replicas)
    return process_share(dataset, index, count)


class LeftOutReport(keras.callbacks.Callback):
    """Logs, after each epoch, how many training pairs the stream has left out so far for being wider than
    the padded widths (the longest rows of the vocabulary sample and the held-out sets: rare, since a wider
    pair is rarer than the widest of the sample). They are left out rather than cut, since a cut target
    loses its end-of-sentence token and would teach the model to stop mid-sentence."""

    def __init__(self, left_out: tf.Variable, stream: TrainStream) -> None:
        super().__init__()
        self.left_out, self.stream = left_out, stream

    def on_epoch_end(self, epoch: int, logs=None) -> None:
        count = int(self.left_out.numpy())
        if count:
            log.info(
                "streamed corpus: %d training pairs left out so far, wider than %d source / %d target tokens",
                count,
                self.stream.source_width,
                self.stream.target_width,
            )
