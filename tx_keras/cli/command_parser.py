"""The argument parser a tx-* command starts from: its name, what it does, the folder or file it works on,
and the one error line it exits with when that turns out wrong after parsing (or when a command that loads
or writes a SavedModel finds Keras running on another backend than TensorFlow's)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from tx_keras.runtime.keras_backend import running_backend, select_backend


class CommandParser(argparse.ArgumentParser):
    """argparse's parser plus `fail`, for a mistake found after parsing (a folder that is not a run)."""

    def fail(self, message: str) -> NoReturn:
        """`prog: error: message` on stderr and exit 2, as argparse's own errors, without the usage: the
        arguments parsed, it is what they name that is wrong."""
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def command_parser(prog: str, description: str, target: str, **target_options: Any) -> CommandParser:
    """The parser of the command `prog` whose first argument, `target`, is what it works on
    (`target_options` as `add_argument` takes them); the command adds its options after it."""
    parser = CommandParser(prog=prog, description=description)
    parser.add_argument(target, **target_options)
    return parser


def use_tensorflow_backend(parser: CommandParser) -> None:
    """KERAS_BACKEND=tensorflow for this command, whatever backend trained the run (a shell may have set jax
    for tx-train), before Keras's first import; one line and exit 2 in a process that already runs Keras on
    another backend: a SavedModel is TensorFlow's."""
    running = running_backend()
    if running not in (None, "tensorflow"):
        parser.fail(
            f"this process already runs Keras on {running}; a SavedModel is TensorFlow's: run "
            f"{parser.prog} in a process of its own"
        )
    select_backend("tensorflow")
