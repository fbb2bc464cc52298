"""make_dataset's batches without tf.data: numpy arrays served through `keras.utils.PyDataset`, for a
JAX run on a machine without TensorFlow (`fit` takes a PyDataset on every backend).

Same rows, same widths, same batches as the tf.data pipeline where the order comes from numpy:
bucketed batching (`length_batches`, seeded by (seed, epoch)) and unshuffled fixed batches. A shuffled
fixed order is a numpy permutation seeded by (seed, epoch): seeded and resumable like the tf.data one,
but not the same order (that one draws it with TensorFlow's stateless random ops).
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np

from tx_keras.data.batching.batch_request import BatchRequest
from tx_keras.data.batching.length_batches import (
    batch_width,
    computed_rows,
    epoch_widths,
    length_batches,
    row_lengths,
)


def _integer(value) -> int:
    """An int, or the value of a Keras variable the trainer sets (the epoch, the batches to skip)."""
    return int(np.asarray(keras.ops.convert_to_numpy(value))) if not isinstance(value, int) else value


class NumpyBatches(keras.utils.PyDataset):
    """`((source, decoder_input), labels)` int32 batches; the epoch's plan is drawn in `on_epoch_begin`,
    which Keras calls after the callbacks' (so the trainer has set `epoch` and `skip` by then)."""

    def __init__(self, *args: Any, **kwargs: Any):
        """The arguments are BatchRequest's, as make_dataset's."""
        super().__init__()  # one worker, in the training thread: batches come in plan order
        request = BatchRequest(*args, **kwargs)
        self.source, self.target, self.shape_classes = request.source, request.target, request.shape_classes
        self.batch_size, self.shuffle, self.seed = request.batch_size, request.shuffle, request.seed
        self.drop_remainder, self.batching = request.drop_remainder, request.batching
        self.batch_tokens, self.epoch, self.skip = request.batch_tokens, request.epoch, request.skip
        self.lengths = np.maximum(row_lengths(self.source), row_lengths(self.target))
        self.widths = epoch_widths(self.lengths, self.shape_classes)
        self.plan = self._plan()
        # Every epoch's count, also one resumed mid-epoch (as the tf.data pipeline declares it): the
        # trainer ends a shortened epoch itself (training/callbacks/mid_epoch_checkpoint.py).
        self.batches_per_epoch = len(self._plan(skip=False))

    def _plan(self, skip: bool = True) -> list[np.ndarray]:
        """This epoch's batches (row indices), without the first `skip` ones."""
        epoch = _integer(self.epoch)
        if self.batching == "bucket":
            seed = self.seed if self.shuffle else None
            batches = length_batches(
                self.lengths, self.batch_size, self.batch_tokens, seed, epoch, self.shape_classes
            )
        else:
            rows = len(self.source)
            order = (
                np.random.default_rng([self.seed, epoch]).permutation(rows)
                if self.shuffle
                else np.arange(rows)
            )
            end = rows - rows % self.batch_size if self.drop_remainder else rows
            batches = [order[i : i + self.batch_size] for i in range(0, end, self.batch_size)]
        skipped = skip and self.shuffle and self.skip is not None
        return batches[_integer(self.skip) if skipped else 0 :]

    def on_epoch_begin(self) -> None:
        self.plan = self._plan()

    @property
    def num_batches(self) -> int:
        return self.batches_per_epoch

    def __len__(self) -> int:
        return self.batches_per_epoch

    def __getitem__(self, index: int):
        rows = self.plan[index]
        source, target = self.source[rows], self.target[rows]
        if self.batching != "bucket":
            return (source, target[:, :-1]), target[:, 1:]
        # Both sides cut to the batch's bucket width, and (shape classes) padding rows up to its full rows,
        # as tf.data does (data/batching/row_padding.py: inputs repeat the first row, labels count no token).
        width = int(batch_width(self.lengths[rows].max(), self.widths))
        source, target = source[:, :width], target[:, :width]
        extra = computed_rows(rows, width, self.batch_size, self.batch_tokens, self.shape_classes) - len(rows)
        first = np.zeros(extra, np.int64)  # padding rows repeat the first row's inputs
        source, target = (np.concatenate([side, side[first]]) for side in (source, target))
        labels = target[:, 1:].copy()
        labels[len(rows) :] = 0  # and count no token
        return (source, target[:, :-1]), labels
