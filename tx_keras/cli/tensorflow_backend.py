"""The commands that load or write a SavedModel run Keras on TensorFlow, whatever backend trained the run."""

from __future__ import annotations

from tx_keras.cli.command_parser import CommandParser
from tx_keras.runtime.keras_backend import running_backend, select_backend


def use_tensorflow_backend(parser: CommandParser) -> None:
    """KERAS_BACKEND=tensorflow for this command (a shell may have set jax for tx-train), before Keras's
    first import; one line and exit 2 in a process that already runs Keras on another backend."""
    running = running_backend()
    if running not in (None, "tensorflow"):
        parser.fail(
            f"this process already runs Keras on {running}; a SavedModel is TensorFlow's: run "
            f"{parser.prog} in a process of its own"
        )
    select_backend("tensorflow")
