"""Cross-entropy over real target tokens only: padding must neither count nor dilute the mean."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.training.replica_mean import mean_over_replicas
from tx_keras.training.sparse_cross_entropy import sparse_cross_entropy


@keras.saving.register_keras_serializable(package="tx_keras")
class MaskedCrossEntropy(keras.losses.Loss):
    """Mean token cross-entropy where label id 0 (padding) is excluded, with optional label smoothing.

    Returns one scalar per batch: sum(loss * mask) / sum(mask), so a batch of short sentences does not
    weigh less than one of long sentences padded to the same length. This is the objective a step
    descends; the loss an epoch *reports* is summed over tokens across batches (`TokenMeanLoss`), since
    Keras' own tracker weighs each batch's mean by its rows and so leans to short-sentence batches.
    """

    ignores_padding = True  # label 0 never counts: the model may leave padding rows out (real_positions.py)
    token_mean = True  # the real labels' summed losses over their count: a step may cut its batch into
    # row parts and weigh each part's mean by its count (models/row_parts_step.py)

    def __init__(self, label_smoothing: float = 0.0, name: str = "masked_cross_entropy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing

    def token_losses(self, y_true, y_pred):
        """(cross-entropy per position (B, T), 0/1 mask of the real tokens (B, T)), both float32."""
        labels = ops.cast(y_true, "int32")
        losses = sparse_cross_entropy(labels, ops.cast(y_pred, "float32"), self.label_smoothing)
        return losses, ops.cast(ops.not_equal(labels, 0), losses.dtype)

    def call(self, y_true, y_pred):
        losses, mask = self.token_losses(y_true, y_pred)
        # The replicas' mean count: with data parallelism the summed objective is the global token mean.
        return ops.sum(losses * mask) / ops.maximum(mean_over_replicas(ops.sum(mask)), 1.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "label_smoothing": self.label_smoothing}
