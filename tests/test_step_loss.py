"""The per-step training-loss curve: a point every N optimizer steps and at each epoch's end, each the
mean loss of the steps since the previous point."""

import keras
import numpy as np
import tensorflow as tf
from tensorboard.compat.proto.event_pb2 import Event

from tx_keras.run_folder.resume import STEP_LOSS_TAG
from tx_keras.training.callbacks.epoch_scalars import EpochScalars

BATCH, BATCHES = 4, 5


def _points(folder):
    points = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = Event.FromString(record)
            for value in event.summary.value:
                if value.tag == STEP_LOSS_TAG:
                    points.append((event.step, float(tf.make_ndarray(value.tensor))))
    return points


def test_points_every_n_steps_and_at_epoch_ends_average_the_steps_since_the_last(tmp_path):
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(BATCH * BATCHES, 3)).astype("float32")
    y = np.random.default_rng(1).normal(size=(BATCH * BATCHES, 1)).astype("float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.0), "mse")  # weights never change: each batch's loss is known
    batch_losses = [
        float(model.evaluate(x[i : i + BATCH], y[i : i + BATCH], verbose=0)) for i in range(0, len(x), BATCH)
    ]

    history = model.fit(
        x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0, callbacks=[EpochScalars(tmp_path, 2)]
    )

    points = _points(tmp_path / "train")
    assert [step for step, _ in points] == [2, 4, 5, 6, 8, 10]  # 5 steps an epoch; 10 ends both rules
    per_step = batch_losses * 2
    windows = [(0, 2), (2, 4), (4, 5), (5, 6), (6, 8), (8, 10)]
    expected = [np.mean(per_step[start:end]) for start, end in windows]
    np.testing.assert_allclose([value for _, value in points], expected, rtol=1e-5)
    # An epoch's points, weighted by their steps, are its epoch loss.
    first_epoch = (2 * points[0][1] + 2 * points[1][1] + points[2][1]) / 5
    np.testing.assert_allclose(first_epoch, history.history["loss"][0], rtol=1e-5)


def test_zero_writes_no_step_points(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((8, 3), "float32"), np.ones((8, 1), "float32")
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[EpochScalars(tmp_path, 0)])
    assert _points(tmp_path / "train") == []
    assert list((tmp_path / "train").glob("events.out.tfevents.*"))  # the epoch curves still are written


def test_validation_after_an_epoch_does_not_leak_into_its_last_point(tmp_path):
    """fit's validation pass refills the compiled loss metric with the validation loss before the epoch's
    end: the point written there still averages the epoch's training steps."""
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(BATCH * BATCHES, 3)).astype("float32")
    y = np.random.default_rng(1).normal(size=(BATCH * BATCHES, 1)).astype("float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.0), "mse")
    history = model.fit(
        x,
        y,
        batch_size=BATCH,
        epochs=2,
        shuffle=False,
        verbose=0,
        validation_data=(x, 10.0 * y),  # a validation loss far from the training one
        callbacks=[EpochScalars(tmp_path, 100)],  # no point inside an epoch: one at each end
    )
    points = _points(tmp_path / "train")
    assert [step for step, _ in points] == [5, 10]
    np.testing.assert_allclose([value for _, value in points], history.history["loss"], rtol=1e-5)
    assert history.history["val_loss"][0] > 10 * history.history["loss"][0]
