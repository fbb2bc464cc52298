"""`trainer.distribution`: one model copy per device, each step's global batch split between them, on the
engines' own data-parallel machinery (none of ours).

- TensorFlow: `tf.distribute.MirroredStrategy` over this process's devices. Keras builds and compiles
  the model under its scope and `fit` splits each tf.data batch between the replicas. Several processes
  are refused: Keras 3's `fit` fails under MultiWorkerMirroredStrategy (keras-team/keras#20585).
- JAX: `keras.distribution.DataParallel` over every device of every process (after
  `keras.distribution.initialize`, training/processes/process_group.py); `fit` gives each process its
  share of the batch and XLA all-reduces the gradients.

The batch a config names is the global one, so a run takes the same optimizer steps (and the learning-rate
schedule, defined on them, the same values) on any number of devices.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import keras

from tx_keras.training.processes.device_split import local_devices
from tx_keras.user_error import UserError

_LOG = logging.getLogger("tx_keras.run")


@contextlib.contextmanager
def data_parallel(trainer, processes: int = 1) -> Iterator[int]:
    """The run's distribution for the `with` block (build, fit, evaluation); yields the replica count.

    A no-op for `trainer.distribution=none`. The batch size must split evenly between the replicas.
    """
    if trainer.distribution == "none":
        yield 1
        return
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        # Several processes: every process's devices (each shows `trainer.devices` of its own).
        devices = jax.devices() if processes > 1 else local_devices("jax", trainer.devices)
        _check_batch(trainer, len(devices))
        # Each process reads its own share of every batch (data/batching/replica_batches.py): Keras' own
        # sharding needs a batch size it can read off the pipeline, which the resumable one hides.
        distribution = keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False)
        _LOG.info(
            "data_parallel: keras.distribution.DataParallel over %d devices, %d process(es)",
            len(devices),
            processes,
        )
        with distribution.scope():
            yield len(devices)
        return
    import tensorflow as tf  # one process only: the config check refuses several (keras-team/keras#20585)

    devices = local_devices("tensorflow", trainer.devices)
    _check_batch(trainer, len(devices))
    strategy = tf.distribute.MirroredStrategy(devices)
    _LOG.info("data_parallel: tf.distribute.MirroredStrategy over %d devices", len(devices))
    with strategy.scope():
        yield len(devices)


def _check_batch(trainer, replicas: int) -> None:
    """A global batch that does not split evenly between the replicas would give them unequal shares."""
    if trainer.batching == "fixed" and trainer.batch_size % replicas:
        raise UserError(
            f"trainer.batch_size={trainer.batch_size} must be a multiple of the {replicas} replicas "
            "(trainer.distribution=data_parallel splits each batch evenly between them)"
        )
