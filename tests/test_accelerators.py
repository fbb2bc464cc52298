"""A GPU is named by its model in tx-bench's machine record, on both backends (the H200 run of 12-04
recorded only "cuda:0")."""

from __future__ import annotations

from types import SimpleNamespace

import jax
import keras
import tensorflow as tf

from tx_keras.runtime.accelerators import gpu_names


class _JaxDevice(SimpleNamespace):
    def __str__(self) -> str:
        return self.name


def test_jax_gpus_are_named_by_model_and_cpus_are_left_out(monkeypatch):
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    devices = [
        _JaxDevice(platform="gpu", device_kind="NVIDIA H200", name="cuda:0"),
        _JaxDevice(platform="cpu", device_kind="cpu", name="TFRT_CPU_0"),
    ]
    monkeypatch.setattr(jax, "devices", lambda: devices)
    assert gpu_names() == ["NVIDIA H200 (cuda:0)"]


def test_tensorflow_gpus_are_named_by_model(monkeypatch):
    monkeypatch.setattr(keras.backend, "backend", lambda: "tensorflow")
    gpu = tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind: [gpu] if kind == "GPU" else [])
    details = {"/physical_device:GPU:0": {"device_name": "NVIDIA H200", "compute_capability": (9, 0)}}
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda device: details[device.name])
    assert gpu_names() == ["NVIDIA H200 (/physical_device:GPU:0)"]
