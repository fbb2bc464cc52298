"""The loss an epoch reports, averaged over real target tokens rather than over batch rows."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.training.step.masked_loss import MaskedCrossEntropy


@keras.saving.register_keras_serializable(package="tx_keras")
class TokenMeanLoss(keras.metrics.Metric):
    """sum of the masked cross-entropy over every real token of the epoch / number of those tokens.

    Keras' loss tracker averages each batch's loss weighted by the batch's *rows*; with token-budget
    batches (many short rows or few long ones) that leans the epoch figure towards short sentences.
    Compiled as a metric named "loss", its result replaces the tracker's under the same key (Keras puts
    compiled metrics after the tracker in the logs), so `loss`, `val_loss`, `evaluate` and the summary all
    read the per-token figure. Same label smoothing as the training loss, so it is the same quantity.
    """

    ignores_padding = True  # label 0 never counts: the model may leave padding rows out (real_positions.py)

    def __init__(self, label_smoothing: float = 0.0, name: str = "loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing
        self._loss = MaskedCrossEntropy(label_smoothing)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.tokens = self.add_variable(shape=(), initializer="zeros", name="tokens")

    def update_state(self, y_true, y_pred, sample_weight=None):
        """`sample_weight` (Keras' propagated mask) marks the same positions as label 0: not applied twice.

        The inputs are converted exactly as `keras.losses.Loss.__call__` converts the training loss's (both
        to the loss's float32, the labels cast back to int32 inside), so in a compiled step this metric's
        cross-entropy is the same subgraph as the loss's and TensorFlow's graph optimizer computes the
        softmax over the vocabulary once instead of twice (docs/decisions/one-softmax.md).
        """
        y_true, y_pred = (ops.convert_to_tensor(y, dtype=self._loss.dtype) for y in (y_true, y_pred))
        losses, mask = self._loss.token_losses(y_true, y_pred)
        self.total.assign_add(ops.sum(losses * mask))
        self.tokens.assign_add(ops.sum(mask))

    @property
    def count(self):
        """The denominator, under the name `keras.metrics.Mean` gives it (the per-step loss curve reads
        `total` / `count` of whichever metric reports `loss`)."""
        return self.tokens

    def result(self):
        return self.total / ops.maximum(self.tokens, 1.0)

    def reset_state(self):
        self.total.assign(0.0)
        self.tokens.assign(0.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "label_smoothing": self.label_smoothing}
