"""Batches whose rows split evenly between data-parallel replicas, without changing what a step learns.

A fixed-size run's last batch of an epoch is short (the split's rows rarely divide by the batch size),
and a bucketed batch has as many rows as its token budget allows: JAX's data-parallel `fit` cuts each
batch into equal shares per device (and, with several processes, each process reads its share of a
full-size batch), so such a batch cannot be placed. The short batch is padded with rows that count no token
(data/batching/row_padding.py), so the step's loss, gradient and reported figures are those of the real rows.
"""

from __future__ import annotations

import tensorflow as tf

from tx_keras.data.batching.row_padding import with_padding_rows


def padded_rows(dataset: tf.data.Dataset, multiple: int) -> tf.data.Dataset:
    """`dataset`'s `((source, decoder_input), labels)` batches padded to a multiple of `multiple` rows."""
    if multiple <= 1:
        return dataset

    def pad(inputs, labels):
        rows = tf.shape(labels)[0]
        return with_padding_rows(inputs, labels, (multiple - rows % multiple) % multiple)

    return dataset.map(pad, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def process_share(dataset: tf.data.Dataset, index: int, count: int) -> tf.data.Dataset:
    """Process `index` of `count`'s consecutive share of each batch (rows must divide by `count`).

    JAX assembles a step's global batch from the processes' shares in process order, so the processes of
    a multi-process run together train each step on exactly the rows one process would.
    """
    if count <= 1:
        return dataset

    def share(inputs, labels):
        rows = tf.shape(labels)[0] // count
        mine = slice(index * rows, (index + 1) * rows)
        return tf.nest.map_structure(lambda tensor: tensor[mine], (inputs, labels))

    return dataset.map(share, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
