"""Whether TensorFlow is installed, asked without importing it: a JAX run on a machine without TensorFlow
(the project's GPU machine) takes the TensorFlow-free path (numpy batches, TensorBoard's own event
writer, no SavedModel) instead of failing on the first `import tensorflow`."""

from __future__ import annotations

import importlib.util


def tensorflow_installed() -> bool:
    return importlib.util.find_spec("tensorflow") is not None
