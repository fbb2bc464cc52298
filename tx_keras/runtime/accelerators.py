"""The GPUs of the Keras backend this process runs, asked of that backend only: a JAX process on a
machine without TensorFlow must not import it to learn whether it has a GPU."""

from __future__ import annotations

import sys


def gpu_names() -> list[str]:
    """The GPUs the running backend sees, each as its model and device ("NVIDIA H200 (cuda:0)"): a
    figure is only true for the model, and "cuda:0" alone does not say it. [] before Keras is imported or
    on a CPU."""
    keras = sys.modules.get("keras")
    if keras is None:
        return []
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return [f"{device.device_kind} ({device})" for device in jax.devices() if device.platform == "gpu"]
    if backend == "tensorflow":
        import tensorflow as tf

        return [
            f"{tf.config.experimental.get_device_details(device).get('device_name', 'GPU')} ({device.name})"
            for device in tf.config.list_physical_devices("GPU")
        ]
    return []
