"""A step's token count averaged over TensorFlow's data-parallel replicas, for a token-mean loss that means
the same on any number of devices.

Under `tf.distribute.MirroredStrategy` each replica computes the loss of its share of the batch, Keras
divides it by the replica count and the gradients are summed: a per-replica token mean would weigh a
replica's few long rows like another's many short ones. Dividing each replica's token-loss sum by the
replicas' *mean* token count instead makes the summed objective the global batch's token mean, exactly
the one-device loss. JAX's data parallelism computes the loss over the global batch already (one program
over sharded arrays), so there, as outside a replica step, the count is returned unchanged.
"""

from __future__ import annotations

import keras


def mean_over_replicas(count):
    """`count` averaged over the replicas of the running TensorFlow replica step; itself elsewhere."""
    if keras.backend.backend() != "tensorflow":
        return count
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return count
    return context.all_reduce(tf.distribute.ReduceOp.MEAN, tf.stop_gradient(count))
