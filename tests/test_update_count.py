"""The optimizer's step counter counts updates, also over a pipeline of unknown batch count."""

import keras
import numpy as np
import tensorflow as tf

from tx_keras.training.callbacks.update_count import UpdateCount


class _CounterAtEpochEnd(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen: list[int] = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(int(self.model.optimizer.iterations.numpy()))


def _fit(callbacks: list, epochs: int = 2) -> keras.Model:
    x = np.random.default_rng(0).normal(size=(36, 3)).astype("float32")
    # A filter hides the batch count from Keras, as the bucketed pipeline's epoch plan does: 9 batches of 4.
    data = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).filter(lambda *_: True).batch(4)
    assert data.cardinality() == tf.data.UNKNOWN_CARDINALITY
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    model.fit(data, epochs=epochs, verbose=0, callbacks=callbacks)
    return model


def test_every_epoch_end_sees_the_updates_taken():
    probe = _CounterAtEpochEnd()
    model = _fit([UpdateCount(), probe])
    assert probe.seen == [9, 18]
    assert int(model.optimizer.iterations.numpy()) == 18


def test_a_resumed_fit_counts_on_from_the_restored_counter():
    probe = _CounterAtEpochEnd()
    model = _fit([UpdateCount()], epochs=1)
    x = np.ones((8, 3), "float32")
    data = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).filter(lambda *_: True).batch(4)
    model.fit(data, epochs=1, verbose=0, callbacks=[UpdateCount(), probe])
    assert probe.seen == [11]
