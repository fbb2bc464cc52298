"""A script run with Keras on JAX, from a test process whose Keras already runs on TensorFlow (a process
cannot switch backends): the script prints JSON, the test reads it."""

import json
import os
import subprocess
import sys

import pytest


def json_from_jax(script: str) -> object:
    """What `script` prints (JSON), run in a fresh Python with KERAS_BACKEND=jax; skips without JAX."""
    pytest.importorskip("jax")
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "KERAS_BACKEND": "jax"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)
