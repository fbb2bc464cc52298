"""Shared test setup: quiet TensorFlow logs and seed every test."""

import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    """Each test starts from the same Keras, NumPy and Python random state."""
    keras.utils.set_random_seed(0)


TINY = [
    "model=tiny",
    "trainer.epochs=2",
    "data.num_train=256",
    "data.num_validation=32",
    "data.num_test=32",
    "logging.verbose=0",
]


def tx_train(*args, cwd):
    """Run `tx-train` as a user does, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """One tiny real run shared by the tests that read a run folder back."""
    root = tmp_path_factory.mktemp("cli")
    run_dir = root / "run"
    result = tx_train(*TINY, f"hydra.run.dir={run_dir}", cwd=root)
    return result, run_dir
