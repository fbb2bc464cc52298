"""The run's input pipeline, whichever this machine can run: tf.data (pipeline.make_dataset) where
TensorFlow is installed, on either Keras backend; numpy batches through `keras.utils.PyDataset`
(numpy_batches.NumpyBatches, same arguments, the same batches where numpy draws the order) where it is
not, so a JAX run trains without TensorFlow. With data parallelism (tf.data only) each batch is padded to
rows the replicas split evenly (replica_batches.py)."""

from __future__ import annotations

from typing import Any

import keras
import numpy as np

from tx_keras.data.batching.shape_classes import shape_classes
from tx_keras.runtime.tensorflow_presence import tensorflow_installed


def run_dataset(source: np.ndarray, target: np.ndarray, trainer: Any, shuffle: bool, **kwargs):
    """The input pipeline with the trainer's batch size and batching; with data parallelism (tf.data
    only), every batch padded to rows the replicas split evenly (fixed batching: the full batch size) by
    rows that count no token, and this process's share of it kept."""
    dataset = input_batches(
        source,
        target,
        trainer.batch_size,
        shuffle=shuffle,
        batching=trainer.batching,
        batch_tokens=trainer.batch_tokens,
        shape_classes=shape_classes(trainer),
        **kwargs,
    )
    replicas = replica_count()
    if replicas == 1:
        return dataset
    from tx_keras.data.batching.replica_batches import padded_rows, process_share  # tf.data only

    dataset = padded_rows(dataset, trainer.batch_size if trainer.batching == "fixed" else replicas)
    return process_share(dataset, *process_slot())


def replica_count() -> int:
    """Model copies the running distribution trains (1 outside one): the rows of a batch must split
    evenly between them."""
    if keras.backend.backend() == "jax":
        distribution = keras.distribution.distribution()
        return 1 if distribution is None else int(distribution.device_mesh.devices.size)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return int(tf.distribute.get_strategy().num_replicas_in_sync)
    return 1


def process_slot() -> tuple[int, int]:
    """(this process's index, the process count) of the running JAX run; (0, 1) elsewhere."""
    if keras.backend.backend() == "jax":
        import jax

        return jax.process_index(), jax.process_count()
    return 0, 1


def input_batches(source: np.ndarray, target: np.ndarray, batch_size: int, shuffle: bool, **kwargs):
    """`((source, decoder_input), labels)` batches for `fit` / `evaluate` (make_dataset's arguments)."""
    if tensorflow_installed():
        from tx_keras.data.batching.pipeline import make_dataset

        return make_dataset(source, target, batch_size, shuffle, **kwargs)
    from tx_keras.data.batching.numpy_batches import NumpyBatches

    return NumpyBatches(source, target, batch_size, shuffle, **kwargs)


def pipeline_counter(initial: int):
    """A counter the pipeline reads as each epoch starts (the epoch, the batches to skip): a tf.Variable
    for tf.data, a Keras variable for the numpy batches. Set with `.assign`."""
    if tensorflow_installed():
        import tensorflow as tf

        return tf.Variable(initial, dtype=tf.int64, trainable=False)
    import keras

    return keras.Variable(initial, dtype="int32", trainable=False)  # JAX's default integers are 32-bit
