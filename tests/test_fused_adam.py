"""FusedAdam: Keras' Adam, one TensorFlow kernel per variable; same trajectory, config and variables."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from tx_keras.training.step.fused_adam import FusedAdam


def _model() -> keras.Model:
    """An embedding (its gradient is IndexedSlices) and two dense layers."""
    keras.utils.set_random_seed(3)
    tokens = keras.Input((6,), dtype="int32")
    hidden = keras.layers.Embedding(50, 8)(tokens)
    hidden = keras.layers.Dense(16, activation="relu")(hidden)
    return keras.Model(tokens, keras.layers.Dense(5)(keras.layers.GlobalAveragePooling1D()(hidden)))


def _trained(optimizer: keras.optimizers.Optimizer, jit_compile: bool) -> list[np.ndarray]:
    model = _model()
    model.compile(
        optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=jit_compile
    )
    rng = np.random.default_rng(0)
    tokens, labels = rng.integers(0, 50, (32, 6)), rng.integers(0, 5, (32,))
    model.fit(tokens, labels, batch_size=8, epochs=3, shuffle=False, verbose=0)
    return [np.asarray(w) for w in model.weights + optimizer.variables]


@pytest.mark.parametrize("jit_compile", [False, True])
def test_fused_updates_follow_keras_adam(jit_compile):
    settings = dict(beta_1=0.9, beta_2=0.98, epsilon=1e-9, global_clipnorm=1.0)
    schedule = keras.optimizers.schedules.ExponentialDecay(3e-2, decay_steps=4, decay_rate=0.5)
    ours = _trained(FusedAdam(schedule, **settings), jit_compile)
    theirs = _trained(keras.optimizers.Adam(schedule, **settings), jit_compile)
    assert len(ours) == len(theirs)
    moved = 0
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=2e-4, atol=2e-6)
        moved += int(np.abs(reference).max() > 0)
    assert moved > len(theirs) // 2  # weights and moments, not zeros compared with zeros


def test_the_fused_kernel_runs_once_per_trainable_variable(monkeypatch):
    calls = []
    kernel = tf.raw_ops.ResourceApplyAdam
    monkeypatch.setattr(tf.raw_ops, "ResourceApplyAdam", lambda **kw: calls.append(kw) or kernel(**kw))
    model = _model()
    model.compile(FusedAdam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.train_on_batch(np.zeros((4, 6), "int32"), np.zeros((4,), "int32"))
    assert len(model.trainable_weights) == 5 and len(calls) in (5, 10)  # one a variable in each tracing
    assert len({id(call["var"]) for call in calls}) == 5  # every variable, each its own


def test_config_and_variables_are_adams():
    optimizer = FusedAdam(2e-3, beta_2=0.98, epsilon=1e-9, clipnorm=0.5)
    again = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(again) is FusedAdam and again.get_config() == optimizer.get_config()
    weights = [keras.Variable(np.zeros((3, 2), "float32"), name="kernel")]
    names = {}
    for made in (optimizer, keras.optimizers.Adam(2e-3)):
        made.build(weights)
        names[type(made).__name__] = [(v.name, v.shape) for v in made.variables]
    assert names["FusedAdam"] == names["Adam"]  # checkpoints (variables in order) restore into either
