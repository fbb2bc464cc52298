"""Gradient norm per layer: without the Add, the lower layers of a deep stack get vanishing gradients."""

from __future__ import annotations

import re

import keras
import numpy as np
import tensorflow as tf

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


def gradient_norms_by_layer(model: keras.Model, inputs, labels) -> dict[str, float]:
    """L2 norm of the loss gradient over each layer's weights, on one batch (the model's compiled loss)."""
    with tf.GradientTape() as tape:
        loss = model.loss(labels, model(inputs, training=False))
    variables = model.trainable_variables
    squares: dict[str, float] = {}
    for variable, gradient in zip(variables, tape.gradient(loss, variables), strict=True):
        if gradient is not None:
            name = layer_of(variable.path)
            squares[name] = squares.get(name, 0.0) + float(tf.reduce_sum(tf.square(gradient)))
    return {name: float(np.sqrt(value)) for name, value in squares.items()}
