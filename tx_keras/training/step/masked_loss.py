"""Cross-entropy over real target tokens only: padding must neither count nor dilute the mean.

`mean_over_replicas`: a step's token count averaged over TensorFlow's data-parallel replicas, so the
token mean means the same on any number of devices.

Under `tf.distribute.MirroredStrategy` each replica computes the loss of its share of the batch, Keras
divides it by the replica count and the gradients are summed: a per-replica token mean would weigh a
replica's few long rows like another's many short ones. Dividing each replica's token-loss sum by the
replicas' *mean* token count instead makes the summed objective the global batch's token mean, exactly
the one-device loss. JAX's data parallelism computes the loss over the global batch already (one program
over sharded arrays), so there, as outside a replica step, the count is returned unchanged.
"""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.training.step.sparse_cross_entropy import sparse_cross_entropy


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


def mean_over_replicas(count):
    """`count` averaged over the replicas of the running TensorFlow replica step; itself elsewhere."""
    if keras.backend.backend() != "tensorflow":
        return count
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return count
    return context.all_reduce(tf.distribute.ReduceOp.MEAN, tf.stop_gradient(count))
