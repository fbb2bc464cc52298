"""Epoch checkpoints: a round trip restores weights, optimizer state and dropout seeds exactly."""

import json

import keras
import numpy as np
import pytest

from tx_keras.run_folder.checkpoint import load_checkpoint, restore, save_checkpoint
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dropout(0.5), keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    return model


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(64, 4)).astype("float32"), rng.normal(size=(64, 1)).astype("float32")


def test_resumed_training_matches_uninterrupted_training(tmp_path):
    x, y = _data()
    straight = _model()
    straight.fit(x, y, epochs=4, batch_size=16, shuffle=False, verbose=0)

    first = _model()
    first.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    save_checkpoint(tmp_path / "last.npz", first, 2, {"loss": 1.0})
    checkpoint = load_checkpoint(tmp_path / "last.npz")
    assert checkpoint.epoch == 2 and checkpoint.logs == {"loss": 1.0}

    resumed = _model(seed=1)  # other initial weights and dropout seeds: all must come from the file
    resumed.build((None, 4))
    restore(resumed, checkpoint, tmp_path / "last.npz")
    assert int(resumed.optimizer.iterations) == 8  # drives the learning-rate schedule
    resumed.fit(x, y, initial_epoch=2, epochs=4, batch_size=16, shuffle=False, verbose=0)
    for a, b in zip(straight.variables, resumed.variables, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_callback_saves_every_n_epochs_and_the_last_but_not_a_diverged_one(tmp_path):
    model = _model()
    model.build((None, 4))
    model.optimizer.build(model.trainable_variables)
    callback = EpochCheckpoint(tmp_path / "last.npz", every=2, epochs=5)
    callback.set_model(model)
    saved = []
    for epoch in range(5):
        callback.on_epoch_end(epoch, {"loss": float("nan") if epoch == 3 else 1.0})
        callback.flush()  # written in the background: on disk once flushed (or when training ends)
        checkpoint = load_checkpoint(tmp_path / "last.npz")
        saved.append(checkpoint.epoch if checkpoint else None)
    assert saved == [None, 2, 2, 2, 5]  # epoch 4 diverged (NaN): not saved; epoch 5 is the last


def test_a_damaged_checkpoint_is_one_clear_error(tmp_path):
    assert load_checkpoint(tmp_path / "missing.npz") is None
    model = _model()
    model.build((None, 4))
    model.optimizer.build(model.trainable_variables)
    path = tmp_path / "last.npz"
    save_checkpoint(path, model, 1, {})
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(RunFolderError, match=r"checkpoint .*last.npz is damaged .*delete it"):
        load_checkpoint(path)
    other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    other.compile(optimizer="adam", loss="mse")
    save_checkpoint(path, model, 1, {})
    with pytest.raises(RunFolderError, match="does not fit this model"):
        restore(other, load_checkpoint(path), path)


def test_checkpoints_hold_no_pickles(tmp_path):
    model = _model()
    model.build((None, 4))
    model.optimizer.build(model.trainable_variables)
    save_checkpoint(tmp_path / "last.npz", model, 3, {"loss": 0.5})
    with np.load(tmp_path / "last.npz", allow_pickle=False) as archive:  # would raise on an object array
        assert json.loads(str(archive["meta"]))["epoch"] == 3
        assert all(archive[name].dtype != object for name in archive.files)
