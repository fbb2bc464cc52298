"""Which Keras backend a job runs on: `trainer.backend`, set before Keras is first imported.

Keras reads `KERAS_BACKEND` once, at its first import, so the choice is made per process: `tx-train` sets
it from the config before anything imports Keras, and a process that already runs Keras on another
backend (a sweep worker reused for a job of another backend) is refused rather than silently mixed.
Imports nothing heavy: the config check uses it before TensorFlow starts.
"""

from __future__ import annotations

import importlib.util
import os
import sys

BACKENDS = ("tensorflow", "jax")
# What to install for each backend: the package Keras imports for it, and the extra that brings it.
_INSTALL = {
    "tensorflow": ("tensorflow", "pip install tensorflow"),
    "jax": ("jax", "pip install 'tx_keras[jax]'"),
}


class BackendMismatch(RuntimeError):
    """This process already runs Keras on another backend; Keras cannot switch once imported."""


def missing_backend(name: str) -> str | None:
    """Why `name` cannot run here (its package is not installed), or None."""
    package, install = _INSTALL[name]
    if importlib.util.find_spec(package) is None:
        return f"needs {package}, which is not installed ({install})"
    return None


def running_backend() -> str | None:
    """The backend Keras runs on in this process, or None when Keras is not imported yet."""
    keras = sys.modules.get("keras")
    return keras.backend.backend() if keras is not None else None


def select_backend(name: str) -> None:
    """Make `name` Keras's backend in this process (before Keras's first import), or refuse in one line."""
    running = running_backend()
    if running is not None and running != name:
        raise BackendMismatch(
            f"trainer.backend={name}: this process already runs Keras on {running}, and Keras cannot "
            "switch backends once imported; run each backend in a process (or sweep) of its own"
        )
    os.environ["KERAS_BACKEND"] = name
