"""The run's input pipeline, whichever this machine can run: tf.data (pipeline.make_dataset) where
TensorFlow is installed, on either Keras backend; numpy batches through `keras.utils.PyDataset`
(numpy_batches.NumpyBatches, same arguments, the same batches where numpy draws the order) where it is
not, so a JAX run trains without TensorFlow."""

from __future__ import annotations

import numpy as np

from tx_keras.runtime.tensorflow_presence import tensorflow_installed


def input_batches(source: np.ndarray, target: np.ndarray, batch_size: int, shuffle: bool, **kwargs):
    """`((source, decoder_input), labels)` batches for `fit` / `evaluate` (make_dataset's arguments)."""
    if tensorflow_installed():
        from tx_keras.data.pipeline import make_dataset

        return make_dataset(source, target, batch_size, shuffle, **kwargs)
    from tx_keras.data.numpy_batches import NumpyBatches

    return NumpyBatches(source, target, batch_size, shuffle, **kwargs)


def pipeline_counter(initial: int):
    """A counter the pipeline reads as each epoch starts (the epoch, the batches to skip): a tf.Variable
    for tf.data, a Keras variable for the numpy batches. Set with `.assign`."""
    if tensorflow_installed():
        import tensorflow as tf

        return tf.Variable(initial, dtype=tf.int64, trainable=False)
    import keras

    return keras.Variable(initial, dtype="int32", trainable=False)  # JAX's default integers are 32-bit
