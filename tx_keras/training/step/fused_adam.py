"""Adam whose update is one TensorFlow kernel per variable instead of a dozen element-wise ops."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="tx_keras")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` (same arguments, variables, checkpoints and formula), updated on TensorFlow by
    its fused `ResourceApplyAdam` kernel.

    Keras' Adam writes the update as separate ops (subtract, multiply, square, sqrt, divide and three
    assignments), each a pass over the variable; the fused kernel makes one. On tx-bench's model that was
    ~2.6 % of a float32 training step on the AVX-512 AMD EPYC (docs/decisions/fused-adam.md).
    The formula is the same (m += (g - m)(1 - b1), v += (g^2 - v)(1 - b2), w -= a m / (sqrt(v) + eps), with
    a = lr sqrt(1 - b2^t) / (1 - b1^t)); only the rounding of 1 - b1 in float32 differs, a few ulps.

    Keras' own update runs instead on JAX, with `amsgrad`, and under a tf.distribute strategy (whose
    mirrored variables are updated through Keras' assignments).
    """

    def update_step(self, gradient, variable, learning_rate):
        if keras.backend.backend() != "tensorflow" or self.amsgrad:
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf  # only here: a JAX process need not have TensorFlow

        if tf.distribute.has_strategy():
            return super().update_step(gradient, variable, learning_rate)
        dtype = variable.dtype
        step = ops.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = ops.cast(self.beta_1, dtype), ops.cast(self.beta_2, dtype)
        index = self._get_variable_index(variable)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=self._momentums[index].handle,
            v=self._velocities[index].handle,
            beta1_power=ops.power(beta_1, step),
            beta2_power=ops.power(beta_2, step),
            lr=ops.cast(learning_rate, dtype),
            beta1=beta_1,
            beta2=beta_2,
            epsilon=ops.cast(self.epsilon, dtype),
            grad=tf.convert_to_tensor(ops.cast(gradient, dtype)),  # an embedding's IndexedSlices, densified
            use_locking=False,
        )
