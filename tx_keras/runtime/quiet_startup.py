"""Quiet start-up: TensorFlow's C++ start-up lines stay off the terminal unless the user asks for them.

On a machine without a GPU, importing TensorFlow 2.21 prints `Could not find cuda drivers on your
machine`, `failed call to cuInit: ... UNKNOWN ERROR (303)` and `All log messages before
absl::InitializeLog() is called are written to STDERR`. They look like failures and are none.
`TF_CPP_MIN_LOG_LEVEL` cannot hide them: the first ones come from absl's C++ logging before it is
initialised, which writes every message to stderr whatever the level (measured: level 3 still shows
the `cudart_stub.cc` lines). Hiding the GPU (`CUDA_VISIBLE_DEVICES=`) would silence the probe but also
disable a GPU that is there. So the import and the first device query run with file descriptor 2
redirected to a temporary file; afterwards the lines known to be start-up noise are dropped from the
terminal and everything else (a real warning or error) is written to stderr as it came. Every captured
line also goes to the `tx_keras.startup` logger at DEBUG level: the run's train.log keeps them for a
post-mortem. absl's Python warnings go to the log file only (conf/hydra/default.yaml).

A user who asks TensorFlow for its INFO or WARNING lines (`TF_CPP_MIN_LOG_LEVEL=0` or `1`), or sets
`logging.verbose=2`, sees everything; 2 or 3 set by the user keep the start-up quiet, as they intend.
Importing this module changes nothing: `start_tensorflow`, which the commands call, sets the default level.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import time

from tx_keras.runtime.tensorflow_presence import tensorflow_installed

QUIET_LEVEL = "2"  # TF_CPP_MIN_LOG_LEVEL's default: TensorFlow's own INFO and WARNING lines hidden

_LOG = logging.getLogger("tx_keras.startup")

# Start-up lines that say nothing is wrong: CUDA probing on a CPU machine, absl's pre-init notice,
# duplicate CUDA-library registrations, CPU-instruction and oneDNN notices, TensorRT's absence.
NOISE = re.compile(
    r"All log messages before absl::InitializeLog\(\) is called"
    r"|Could not find cuda drivers on your machine"
    r"|failed call to cuInit"
    r"|Unable to register cu(DNN|FFT|BLAS) factory"
    r"|computation_placer\.cc.*already registered"
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|This TensorFlow binary is optimized to use available CPU instructions"
    r"|To enable the following instructions: .* rebuild TensorFlow"
    r"|oneDNN custom operations are on"
    r"|Attempting to register factory for plugin"
)


def user_wants_tf_logs() -> bool:
    """The user asked TensorFlow for its INFO/WARNING lines (TF_CPP_MIN_LOG_LEVEL=0 or 1); the default set
    by `start_tensorflow` is neither."""
    return os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in ("0", "1")


def wants_startup_messages(verbose: int) -> bool:
    """The user asked for the start-up lines: `logging.verbose=2`, or TF_CPP_MIN_LOG_LEVEL=0/1 set by them."""
    return verbose >= 2 or user_wants_tf_logs()


def start_tensorflow(verbose: int = 1) -> None:
    """Import TensorFlow and Keras and find the devices, keeping the start-up noise off the terminal.

    Does nothing when TensorFlow is imported already (a sweep's second job in a reused worker process),
    or not installed (a JAX run without TensorFlow: runtime/tensorflow_presence.py).
    """
    if "tensorflow" in sys.modules or not tensorflow_installed():
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", QUIET_LEVEL)  # read once, when TensorFlow is imported
    if wants_startup_messages(verbose):
        import keras  # noqa: F401
        import tensorflow as tf

        tf.config.list_physical_devices()
        return
    started = time.perf_counter()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import keras  # noqa: F401
            import tensorflow as tf

            tf.config.list_physical_devices()  # the CUDA probe (cuInit) happens here
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = captured.read().decode("utf-8", errors="replace").splitlines()
            _pass_on(lines)
    _LOG.debug("TensorFlow %s started in %.1f s", tf.__version__, time.perf_counter() - started)


def _pass_on(lines: list[str]) -> None:
    """Every captured line to the log; those that are not known noise to stderr as well."""
    for line in lines:
        _LOG.debug("start-up: %s", line)
        if line.strip() and not NOISE.search(line):
            print(line, file=sys.stderr)
    sys.stderr.flush()


def quiet_absl(verbose: int) -> None:
    """absl's Python warnings (Keras' saving notices) to the log file only, unless the user wants them."""
    absl = logging.getLogger("absl")
    if wants_startup_messages(verbose):
        absl.propagate = True
        absl.handlers.clear()
