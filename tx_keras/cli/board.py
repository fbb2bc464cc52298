"""`tx-board`: the real TensorBoard over the run folders `tx-train` writes, local-only unless asked."""

from __future__ import annotations

import ipaddress
import os
import signal
import sys
import time
from pathlib import Path

from tx_keras.cli.command_parser import CommandParser, command_parser

# First: notes whether the user set TF_CPP_MIN_LOG_LEVEL, then sets its default (TensorFlow reads it once).
from tx_keras.runtime.quiet_startup import start_tensorflow

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C, and systemd / docker stop / kill


def _parser() -> CommandParser:
    parser = command_parser(
        "tx-board",
        "Serve TensorBoard over tx-train run folders (a run, a sweep, or all).",
        "logdir",
        nargs="?",
        default="outputs",
        help="run, sweep or outputs folder (default: outputs)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)"
    )
    parser.add_argument("--port", type=int, default=6006, help="port to serve on; 0 picks a free one")
    return parser


def _is_loopback(host: str) -> bool:
    """Host names other than localhost count as exposed: what they resolve to can change."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _start_tensorflow_then_honour_stop() -> None:
    """Import TensorFlow with Ctrl-C and SIGTERM held until it returns, then stop if one came.

    An interrupt raised inside that import is not reliably a KeyboardInterrupt (measured: once an
    `ImportError` about optree ended tx-board with a traceback, once the interrupt was swallowed and
    tx-board kept serving), so the stop waits the few seconds the import takes.
    """
    asked: list[int] = []
    previous = {
        number: signal.signal(number, lambda signal_number, _frame: asked.append(signal_number))
        for number in STOP_SIGNALS
    }
    try:
        start_tensorflow()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if asked:
        raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Start TensorBoard, print its URL, block until Ctrl-C or SIGTERM, then exit 0."""
    parser = _parser()
    args = parser.parse_args(argv)
    logdir = Path(args.logdir).expanduser().resolve()
    if not logdir.is_dir():
        parser.fail(f"logdir {logdir} {'is not a folder' if logdir.exists() else 'does not exist'}")
    if not _is_loopback(args.host):
        print(
            f"tx-board: warning: binding to {args.host}: whoever can reach this machine can read these runs",
            file=sys.stderr,
        )
    # SIGTERM (systemd, docker stop, kill) ends the server the same quiet way Ctrl-C does.
    for number in STOP_SIGNALS:
        signal.signal(number, signal.default_int_handler)
    try:
        from tensorboard import program

        board = program.TensorBoard()
        board.configure(logdir=str(logdir), host=args.host, port=args.port)
        try:
            url = board.launch()  # serves from a daemon thread; it ends with this process
        except program.TensorBoardServerException as error:
            print(f"tx-board: error: {error.msg}", file=sys.stderr)
            sys.exit(1)
        print(f"tx-board: TensorBoard at {url} (logdir {logdir}) - Ctrl-C to stop", flush=True)
        print(f"tx-board: loss and accuracy first: {url}#scalars", flush=True)
        # TensorBoard imports TensorFlow on the first page that reads tensors, and its CUDA probe lines
        # would land on this terminal: start it here, quietly, after the URL is out (~5 s, not before it).
        _start_tensorflow_then_honour_stop()
        while True:
            time.sleep(1)  # short naps: a signal delivered to a server thread is still seen within a second
    except KeyboardInterrupt:
        print("tx-board: stopped", file=sys.stderr)
    # Nothing is left to write: TensorBoard's threads (or a TensorFlow import the signal cut into) must not
    # hold the exit, as they can in Python's shutdown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
