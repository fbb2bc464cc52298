"""A training (or evaluation) step over parts of its batch's rows, which TensorFlow runs side by side.

TensorFlow's executor runs each op on an inter-op thread and splits an op's work over its intra-op threads; on
2 cores a step's many small ops and small matmuls leave one core waiting for much of the step, and the
hand-offs between the pools cost CPU of their own. With one intra-op thread and one inter-op thread per part,
each part's forward and backward pass is a chain of ops that one core runs on its own, and both cores stay
busy; the same parts under the default pools were slower, and one intra-op thread without parts no faster
(docs/decisions/row-parts.md): the parts and the pools go together, which is why the parts follow the pools
here and the commands set the pools (training/step/step_threads.py); a library sets no threads in its host.

The objective is the same: the loss says it is a token mean (`token_mean = True`: the sum of its
per-token losses over the real labels, divided by their count), so each part's mean is weighted by its
own count of real labels and divided by the batch's, which gives the whole batch's mean; the gradients
of the parts add up to the batch's, and the metrics accumulate their sums part by part. Only a plain
TensorFlow graph step is cut: XLA and JAX compile the whole step and schedule it themselves, a
distribution strategy already runs replicas side by side, and per-sample weights or extra
(`add_loss`) losses would not add up this way.
"""

from __future__ import annotations

from itertools import pairwise

import keras

from tx_keras.runtime.thread_pools import inter_op_threads, intra_op_threads

# Measured on 2 cores only: three or four parts there took 1.23x and 1.25x the time of two.
MOST_PARTS = 2


def auto_parts() -> int:
    """The parts TensorFlow's pools can run side by side: its inter-op threads (at most MOST_PARTS) when
    an op runs on one thread, else 1 (an op already splits over the cores)."""
    if intra_op_threads() != 1:
        return 1
    return max(1, min(inter_op_threads(), MOST_PARTS))


def row_parts(model: keras.Model, sample_weight=None) -> int:
    """How many parts `model`'s step cuts a batch into: `model.step_parts` (None = `auto_parts()`)
    where the step can be cut (module docstring), else 1."""
    if keras.backend.backend() != "tensorflow":  # (JAX compiles the step; TensorFlow may be absent)
        return 1
    import tensorflow as tf

    cuttable = (
        not model.jit_compile
        and getattr(model.loss, "token_mean", False)
        and sample_weight is None
        and not tf.distribute.has_strategy()
        and not model.losses
    )
    if not cuttable:
        return 1
    return auto_parts() if model.step_parts is None else model.step_parts


def step_in_parts(model: keras.Model, data, parts: int, training: bool) -> dict:
    """Keras' train step (`training`) or test step for `data`, its rows cut into `parts` consecutive
    slices (a slice may be empty), each sent through the model, the loss and the metrics on its own;
    returns the metrics as Keras' step does."""
    import tensorflow as tf

    x, y, _ = keras.utils.unpack_x_y_sample_weight(data)
    rows = tf.shape(y)[0]
    bounds = [rows * part // parts for part in range(parts + 1)]

    def objective():
        weighted, tokens = [], []
        for part in pairwise(bounds):
            x_part, y_part = keras.tree.map_structure(lambda t, cut=slice(*part): t[cut], (x, y))
            y_pred = model(x_part, training=training)
            counted = tf.reduce_sum(tf.cast(tf.not_equal(y_part, 0), tf.float32))
            loss = model.compute_loss(x_part, y_part, y_pred, training=training)
            weighted.append(loss * tf.maximum(counted, 1.0))  # the part's summed token losses
            tokens.append(counted)
            model.compute_metrics(x_part, y_part, y_pred)
        return tf.add_n(weighted) / tf.maximum(tf.add_n(tokens), 1.0)

    if training:
        with tf.GradientTape() as tape:
            loss = objective()
            scaled = model.optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled, model.trainable_weights)
        model.optimizer.apply_gradients(zip(gradients, model.trainable_weights, strict=True))
    else:
        loss = objective()
    model._loss_tracker.update_state(loss, sample_weight=rows)  # as Keras' steps: the batch's rows
    return model.get_metrics_result()
