"""Continue an epoch in the middle: the epoch's batches without the ones a checkpoint says were trained."""

from __future__ import annotations

import tensorflow as tf


def skip_batches(dataset: tf.data.Dataset, count: tf.Variable) -> tf.data.Dataset:
    """`dataset` without its first `count` elements, `count` read as the iteration goes (a trainer sets it
    as an epoch begins, before Keras opens that epoch's iterator): the rest come in the same order, since
    the pipeline draws an epoch's order from the seed and the epoch alone (data/pipeline.py)."""
    return dataset.enumerate().filter(lambda index, _: index >= count).map(lambda _, batch: batch)
