"""Continue an epoch in the middle: the epoch's batches without the ones a checkpoint says were trained."""

from __future__ import annotations

import tensorflow as tf


def skip_batches(dataset: tf.data.Dataset, count: tf.Variable) -> tf.data.Dataset:
    """`dataset` without its first `count` elements, `count` read as the iteration goes (a trainer sets it
    as an epoch begins, before Keras opens that epoch's iterator): the rest come in the same order, since
    the pipeline draws an epoch's order from the seed and the epoch alone (data/batching/pipeline.py).

    A length the dataset declares stays declared: Keras then runs exactly that many steps an epoch and
    never one past the end to find it (a step that finds no batch still advances the dropout layers'
    seeds, so a resumed run would drift from an uninterrupted one). The trainer ends the shortened epoch
    itself, at its last batch (training/callbacks/mid_epoch_checkpoint.py). (A bucketed pipeline leaves
    skipped batches out of its epoch plan instead: a filter over a dataset of unknown length made Keras'
    step past each epoch's end advance those seeds.)
    """
    skipped = dataset.enumerate().filter(lambda index, _: index >= count).map(lambda _, batch: batch)
    length = int(dataset.cardinality())
    if length >= 0:
        skipped = skipped.apply(tf.data.experimental.assert_cardinality(length))
    return skipped
