"""The written-out token cross-entropy gives Keras' losses and gradients, far tails included."""

import keras
import numpy as np
import tensorflow as tf

from tx_keras.training.step.sparse_cross_entropy import sparse_cross_entropy


def _losses_and_grads(loss, labels, logits, weights):
    logits = tf.convert_to_tensor(logits)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        losses = loss(tf.convert_to_tensor(labels), logits)
        total = tf.reduce_sum(losses * weights)
    return losses.numpy(), tape.gradient(total, logits).numpy()


def _keras(labels, logits):
    return keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)


def test_losses_and_gradients_are_keras_own():
    rng = np.random.default_rng(0)
    logits = (rng.normal(size=(3, 5, 11)) * 4).astype("float32")
    labels = rng.integers(0, 11, (3, 5)).astype("int32")
    weights = rng.uniform(0, 2, (3, 5)).astype("float32")
    weights[0, :2] = 0.0  # padding: no gradient
    ours = _losses_and_grads(sparse_cross_entropy, labels, logits, weights)
    theirs = _losses_and_grads(_keras, labels, logits, weights)
    assert ours[0].shape == (3, 5) and ours[1].shape == (3, 5, 11)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert np.all(ours[1][0, :2] == 0.0)
    # each row's gradient sums to zero (softmax minus one-hot, times the row's weight)
    np.testing.assert_allclose(ours[1].sum(-1), 0.0, atol=1e-5)


def _keras_smoothed(labels, logits):
    targets = tf.one_hot(labels, logits.shape[-1])
    return keras.losses.categorical_crossentropy(targets, logits, from_logits=True, label_smoothing=0.1)


def test_label_smoothing_gives_keras_own_losses_and_gradients():
    """Targets (1 - e) one_hot + e / V, as Keras smooths them; the gradient is softmax minus those."""
    rng = np.random.default_rng(1)
    logits = (rng.normal(size=(4, 6, 13)) * 4).astype("float32")
    labels = rng.integers(0, 13, (4, 6)).astype("int32")
    weights = rng.uniform(0, 2, (4, 6)).astype("float32")
    weights[1, 3:] = 0.0

    def smoothed(labels, logits):
        return sparse_cross_entropy(labels, logits, label_smoothing=0.1)

    ours = _losses_and_grads(smoothed, labels, logits, weights)
    theirs = _losses_and_grads(_keras_smoothed, labels, logits, weights)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert np.all(ours[1][1, 3:] == 0.0)
    # the smoothing is applied, not ignored: the losses differ from the unsmoothed ones
    plain = _losses_and_grads(sparse_cross_entropy, labels, logits, weights)[0]
    assert not np.allclose(ours[0], plain, atol=1e-3)
    np.testing.assert_allclose(ours[1].sum(-1), 0.0, atol=1e-5)


def test_a_label_far_below_the_best_logit_keeps_its_whole_loss():
    """A probability of e^-200 underflows float32; the loss is read off the largest probability instead."""
    logits = np.zeros((2, 4), "float32")
    logits[:, 0] = 200.0
    labels = np.array([3, 0], "int32")
    losses, grads = _losses_and_grads(sparse_cross_entropy, labels, logits, np.ones(2, "float32"))
    np.testing.assert_allclose(losses, [200.0, 3 * np.exp(-200.0)], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grads[0], [1.0, 0.0, 0.0, -1.0], atol=1e-6)
    assert np.all(np.isfinite(grads))


def test_label_smoothing_keeps_a_far_label_finite():
    """With smoothing the loss is logsumexp - 0.9 x[label] - 0.1 mean(x): finite where p[label] underflows."""
    logits = np.zeros((1, 4), "float32")
    logits[0, 0] = 200.0
    labels = np.array([3], "int32")

    def smoothed(labels, logits):
        return sparse_cross_entropy(labels, logits, label_smoothing=0.1)

    losses, grads = _losses_and_grads(smoothed, labels, logits, np.ones(1, "float32"))
    np.testing.assert_allclose(losses, [200.0 - 0.1 * 50.0], rtol=1e-6)
    np.testing.assert_allclose(grads[0], [1.0 - 0.025, -0.025, -0.025, -0.925], atol=1e-6)
