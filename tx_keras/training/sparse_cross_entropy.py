"""Token cross-entropy from logits and integer labels, through the softmax kernel oneDNN speeds up."""

from __future__ import annotations

import keras
from keras import ops


@ops.custom_gradient
def _softmax_cross_entropy(labels, logits):
    """(N,) int labels, (N, V) float32 logits -> (N,) losses, with the gradient softmax - one_hot.

    The loss is logsumexp(x) - x[label], and logsumexp(x) = max(x) - log(max(softmax(x))): the largest
    probability is at least 1/V, so its log never underflows, and one softmax serves the loss and the
    gradient. The gradient writes (p - 1) * g at each label into p * g in place.
    """
    probs = ops.softmax(logits, axis=-1)
    rows = ops.expand_dims(labels, -1)
    picked = ops.take_along_axis(logits, rows, axis=-1)[:, 0]
    losses = ops.max(logits, axis=-1) - ops.log(ops.max(probs, axis=-1)) - picked

    def backward(*args, upstream=None):
        upstream = args[0] if upstream is None else upstream
        at_labels = ops.take_along_axis(probs, rows, axis=-1)[:, 0]
        positions = ops.stack([ops.arange(ops.shape(labels)[0], dtype=labels.dtype), labels], axis=1)
        grads = ops.scatter_update(
            probs * ops.expand_dims(upstream, -1), positions, (at_labels - 1.0) * upstream
        )
        return None, grads

    return losses, backward


def sparse_cross_entropy(labels, logits):
    """Per-position cross-entropy of (..., V) float32 logits against (...) int32 labels, shape (...).

    On TensorFlow, written out around `ops.softmax`: TensorFlow's fused `SparseSoftmaxCrossEntropyWithLogits`
    kernel runs Eigen code, while its softmax runs oneDNN's (on by default on AVX-512 CPUs), and on a
    (2048, 2000) batch the loss with its gradient took 5.2-6.8 ms against 13.0-16.5 (Eigen's softmax with
    oneDNN off: 7.2-11.7 against 12.6-15.7); docs/performance.md, "The loss's softmax on oneDNN". Other
    backends compile the step with XLA, which fuses Keras' own loss as well.
    """
    if keras.backend.backend() != "tensorflow":
        return keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    shape = ops.shape(labels)
    flat = _softmax_cross_entropy(
        ops.reshape(labels, (-1,)), ops.reshape(logits, (-1, ops.shape(logits)[-1]))
    )
    return ops.reshape(flat, shape)
