"""Token accuracy over real target tokens only (padding excluded), accumulated over a whole epoch."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.most_likely import most_likely


@keras.saving.register_keras_serializable(package="tx_keras")
class MaskedAccuracy(keras.metrics.Metric):
    """Correct next-token predictions / real target tokens, summed over batches (not a mean of means).

    Label id 0 is padding and never counts; Keras' propagated mask (passed as `sample_weight`) marks the
    same positions, so it is ignored rather than applied twice. The prediction is argmax's (the lowest id
    on a tie) through `most_likely`, one op instead of argmax's six on TensorFlow.
    """

    ignores_padding = True  # label 0 never counts: the model may leave padding rows out (real_positions.py)

    def __init__(self, name: str = "accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels = ops.cast(y_true, "int32")
        mask = ops.not_equal(labels, 0)
        hits = ops.logical_and(ops.equal(most_likely(y_pred), labels), mask)
        self.correct.assign_add(ops.sum(ops.cast(hits, "float32")))
        self.total.assign_add(ops.sum(ops.cast(mask, "float32")))

    def result(self):
        return self.correct / ops.maximum(self.total, 1.0)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)
