"""A multi-process run ends on every process, in one line, as soon as one of its processes dies.

JAX's processes meet in every step's collectives; when one dies the others either fail inside a collective
with a Gloo traceback or wait until the coordination service misses its heartbeats
(training/processes/process_group.py: HEARTBEAT_TIMEOUT_S) and aborts them with a C++ stack trace. Neither
tells the user what happened or what to do. So each process also holds one TCP connection to process 0 (on
the coordinator's port + 1): the kernel closes a dead process's connections at once (kill -9 included), and
the survivor prints one line and exits with INTERRUPTED_EXIT_CODE, the code of a run that the same command
resumes from its last checkpoint. (A machine that vanishes without closing its connections is still caught
by JAX's heartbeat, with JAX's own message.)

A process that ends says so on its connection first, so its exit is no alarm; one whose run failed says
that instead, and the others end too unless their own run fails the same way (the usual case: every
process runs the same program on the same data).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time

from tx_keras.training.processes.process_group import ProcessGroup
from tx_keras.training.processes.stop_signals import INTERRUPTED_EXIT_CODE

_ENDED = b"end\n"
_FAILED = b"err\n"
# Seconds a process whose peer failed waits for its own run to fail the same way before ending it itself.
_FAILED_GRACE_S = 10.0
_CONNECT_TIMEOUT_S = 60.0


def watch_port(group: ProcessGroup) -> tuple[str, int]:
    """Where process 0 listens for the others' connections: the coordinator's host, its port + 1."""
    host, _, port = str(group.coordinator).rpartition(":")
    return host, int(port) + 1


class PeerWatch:
    """One connection per process to process 0; the death of either end ends the other."""

    def __init__(self, group: ProcessGroup) -> None:
        self.group = group
        self._connections: list[socket.socket] = []
        self._ending = threading.Event()
        self._lost = threading.Event()

    def start(self) -> PeerWatch:
        """Connect (blocks until every process has, or _CONNECT_TIMEOUT_S), then watch in the background."""
        host, port = watch_port(self.group)
        if self.group.is_writer:
            with socket.create_server(("", port), reuse_port=False) as server:
                server.settimeout(_CONNECT_TIMEOUT_S)
                for _ in range(self.group.count - 1):
                    connection, _ = server.accept()
                    peer = int(connection.makefile("rb").readline())
                    self._watch(connection, peer)
        else:
            connection = self._connect(host, port)
            connection.sendall(f"{self.group.index}\n".encode())
            self._watch(connection, 0)
        return self

    def _connect(self, host: str, port: int) -> socket.socket:
        deadline = time.monotonic() + _CONNECT_TIMEOUT_S
        while True:
            try:
                return socket.create_connection((host, port), timeout=5)
            except OSError:  # process 0 is not listening yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _watch(self, connection: socket.socket, peer: int) -> None:
        connection.settimeout(None)
        self._connections.append(connection)
        threading.Thread(target=self._wait, args=(connection, peer), daemon=True).start()

    def _wait(self, connection: socket.socket, peer: int) -> None:
        try:
            said = connection.recv(len(_ENDED))
        except OSError:
            said = b""
        if said == _ENDED or self._ending.is_set():
            return
        if said == _FAILED and self._ending.wait(_FAILED_GRACE_S):
            return  # the same error ended this process's run too (every process runs the same program)
        self._lost.set()
        self._end_run(
            peer, "failed (its own output says why)" if said == _FAILED else "stopped (killed or crashed)"
        )

    def grace(self, seconds: float) -> None:
        """Give the watch `seconds` to end the run (it exits the process) when this process has just failed:
        a failed collective is usually a peer's death seen a moment before its connection closes."""
        self._lost.wait(seconds)

    def _end_run(self, peer: int, what: str) -> None:
        """Print the line and leave at once: JAX's own exit would wait for the dead process, then abort."""
        print(
            f"tx-train: process {peer} of the {self.group.count} processes of this run {what}; process "
            f"{self.group.index} ends too. Start the same command on every process to resume from the last "
            "checkpoint",
            file=sys.stderr,
            flush=True,
        )
        os._exit(INTERRUPTED_EXIT_CODE)

    def stop(self, failed: bool = False) -> None:
        """This process's run ended (`failed`: with an error): tell the others, so that they do not take
        its exit for a death, and end themselves unless their run fails too."""
        self._ending.set()
        for connection in self._connections:
            try:
                connection.sendall(_FAILED if failed else _ENDED)
            except OSError:
                pass
