"""Shared test setup: quiet TensorFlow logs and seed every test."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    """Each test starts from the same Keras, NumPy and Python random state."""
    keras.utils.set_random_seed(0)
