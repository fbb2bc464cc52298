"""Gradient norm per layer: without the Add, the lower layers of a deep stack get vanishing gradients."""

from __future__ import annotations

import re

import keras
import numpy as np

_BLOCK = re.compile(r"(encoder|decoder)/block_(\d+)/")


def layer_of(variable_path: str) -> str:
    """Group a weight by the layer it belongs to: `encoder/layer_2`, `decoder/embedding`, `logits`."""
    match = _BLOCK.search(variable_path)
    if match:
        return f"{match.group(1)}/layer_{match.group(2)}"
    for part in ("encoder", "decoder"):
        if f"{part}/" in variable_path:
            return f"{part}/embedding" if "embedding" in variable_path else f"{part}/final_norm"
    return "logits"


def _tensorflow_gradients(model: keras.Model, inputs, labels) -> list:
    """Under a tf.distribute strategy (trainer.distribution=data_parallel) mirrored weights can only be
    differentiated in a replica's context: every replica takes the whole batch, so any replica's gradients
    are the batch's, and the first is read."""
    import tensorflow as tf

    def gradients() -> list:
        with tf.GradientTape() as tape:
            loss = model.loss(labels, model(inputs, training=False))
        return tape.gradient(loss, model.trainable_variables)

    if not tf.distribute.has_strategy() or not tf.distribute.in_cross_replica_context():
        return gradients()
    strategy = tf.distribute.get_strategy()
    per_replica = tf.function(lambda: strategy.run(gradients))()  # eager `run` warns of its overhead
    return [strategy.experimental_local_results(g)[0] for g in per_replica]


def _jax_gradients(model: keras.Model, inputs, labels) -> list:
    """JAX has no tape: the loss as a pure function of the weights (`stateless_call`), then `jax.grad`."""
    import jax

    non_trainable = [variable.value for variable in model.non_trainable_variables]

    def loss_of(trainable: list) -> jax.Array:
        logits, _ = model.stateless_call(trainable, non_trainable, inputs, training=False)
        return model.loss(labels, logits)

    return jax.grad(loss_of)([variable.value for variable in model.trainable_variables])


_GRADIENTS = {"tensorflow": _tensorflow_gradients, "jax": _jax_gradients}


def loss_gradients(model: keras.Model, inputs, labels) -> list:
    """d(loss)/d(weight) for each of `model.trainable_variables` on one batch (the model's compiled loss),
    on the backend Keras runs on: the one place the diagnostics need a backend's own autodiff."""
    if not model.built:  # the weights are made by the first call
        model(inputs, training=False)
    return _GRADIENTS[keras.backend.backend()](model, inputs, labels)


def gradient_norms_by_layer(model: keras.Model, inputs, labels) -> dict[str, float]:
    """L2 norm of the loss gradient over each layer's weights, on one batch (the model's compiled loss)."""
    squares: dict[str, float] = {}
    gradients = loss_gradients(model, inputs, labels)
    for variable, gradient in zip(model.trainable_variables, gradients, strict=True):
        if gradient is not None:
            name = layer_of(variable.path)
            value = keras.ops.convert_to_numpy(gradient).astype(np.float64)
            squares[name] = squares.get(name, 0.0) + float(np.sum(np.square(value)))
    return {name: float(np.sqrt(value)) for name, value in squares.items()}
