"""How many local devices a data-parallel process trains on; on a machine without accelerators, the CPU
split into that many devices.

Both engines fix their device list when they first initialise it, so this runs in `tx-train` before
TensorFlow or JAX start (training/run/job.py): JAX shows N host devices with
`XLA_FLAGS=--xla_force_host_platform_device_count=N` (read when its CPU backend starts), TensorFlow with
`tf.config.set_logical_device_configuration` (before its runtime starts). Splitting a CPU changes no
arithmetic a replica does, only how the batch is cut: it is how one machine stands in for several
devices in tests, and costs speed rather than gaining it (the cores are shared).
"""

from __future__ import annotations

import os

from tx_keras.user_error import UserError

_HOST_DEVICES_FLAG = "--xla_force_host_platform_device_count"


def split_host_for_jax(devices: int | None) -> None:
    """Before JAX starts: ask XLA for `devices` CPU devices (a no-op for null or 1; GPUs are unaffected)."""
    if not devices or devices <= 1:
        return
    flags = os.environ.get("XLA_FLAGS", "").split()
    flags = [flag for flag in flags if not flag.startswith(_HOST_DEVICES_FLAG)]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_HOST_DEVICES_FLAG}={devices}"])


def split_host_for_tensorflow(devices: int | None) -> None:
    """Before TensorFlow's runtime starts: split the CPU into `devices` logical devices, unless GPUs are
    there (then MirroredStrategy takes the first `devices` of them)."""
    if not devices or devices <= 1:
        return
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    wanted = [tf.config.LogicalDeviceConfiguration() for _ in range(devices)]
    try:
        tf.config.set_logical_device_configuration(cpu, wanted)
    except RuntimeError:  # a reused worker process: the runtime started with the split it already has
        have = len(tf.config.list_logical_devices("CPU"))
        if have != devices:
            raise UserError(
                f"trainer.devices={devices}: this process's TensorFlow already runs on {have} CPU "
                "device(s), and the split is fixed once it starts; run it in a process of its own"
            ) from None


def local_devices(backend: str, devices: int | None) -> list:
    """The devices this process trains on: the first `devices` accelerators, else the CPU's split; all
    accelerators (or the one CPU) when `devices` is null. Engine device objects (TF names, JAX devices)."""
    if backend == "jax":
        import jax

        found = jax.local_devices()
    else:
        import tensorflow as tf

        found = [device.name for device in tf.config.list_logical_devices("GPU")] or [
            device.name for device in tf.config.list_logical_devices("CPU")
        ]
    if devices is not None and len(found) < devices:
        raise UserError(f"trainer.devices={devices}, but this process has {len(found)} device(s)")
    return found[:devices] if devices else found
