"""tx-board end to end: the installed console script serves TensorBoard over real event files, then stops."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import tensorflow as tf

from tx_keras.cli import board
from tx_keras.cli.board import _is_loopback

TX_BOARD = Path(sys.executable).parent / "tx-board"
URL_LINE = re.compile(r"^tx-board: TensorBoard at (http://([\d.]+):(\d+)/) \(logdir (.+)\) - Ctrl-C to stop$")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    """Two run folders laid out like tx-train's, with a few epochs of loss in train/ (fast: no training)."""
    root = tmp_path_factory.mktemp("board")
    for run, scale in (("run_a", 1.0), ("run_b", 2.0)):
        with tf.summary.create_file_writer(str(root / run / "train")).as_default():
            for epoch in range(3):
                tf.summary.scalar("epoch_loss", scale / (epoch + 1), step=epoch)
    return root


def _start(*args: str) -> tuple[subprocess.Popen, re.Match, list[str]]:
    """Run tx-board and read its output until the URL line (or it exits, or 120 s pass)."""
    process = subprocess.Popen(
        [str(TX_BOARD), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if not ready:
            continue
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        match = URL_LINE.match(lines[-1])
        if match:
            return process, match, lines
    process.kill()
    raise AssertionError("tx-board printed no URL line:\n" + "\n".join(lines + [process.stdout.read()]))


# Only against a hang: how soon tx-board exits is not what is tested. A signal that lands while it imports
# TensorFlow (after the URL line) is handled once that import returns, seconds later, a minute on a loaded
# machine.
HANG_GUARD_S = 600


def _stop(process: subprocess.Popen, signal_number: int, lines: list[str]) -> str:
    """Send the signal, wait for tx-board to exit, return everything it printed: exit code 0, its stop
    line, no traceback."""
    process.send_signal(signal_number)
    rest, _ = process.communicate(timeout=HANG_GUARD_S)
    output = "\n".join(lines) + "\n" + rest
    assert process.returncode == 0, output
    assert "Traceback" not in output
    assert output.rstrip().endswith("tx-board: stopped"), output
    return output


def _listening_addresses(port: int) -> set[str]:
    """IPv4 addresses with a listening TCP socket on `port`, from the kernel's own table."""
    addresses = set()
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = row.split()[1], row.split()[3]
        address, local_port = local.split(":")
        if state == "0A" and int(local_port, 16) == port:  # 0A: LISTEN
            addresses.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return addresses


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return json.load(response)


def test_serves_the_runs_on_loopback_and_stops_cleanly_on_ctrl_c(logdir):
    process, match, lines = _start(str(logdir), "--port", "0")
    try:
        url, host, port, shown_logdir = match.group(1), match.group(2), int(match.group(3)), match.group(4)
        assert host == "127.0.0.1" and port > 0 and shown_logdir == str(logdir)
        assert _listening_addresses(port) == {"127.0.0.1"}
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
        deadline = time.monotonic() + 60
        while (runs := _get_json(url + "data/runs")) != ["run_a/train", "run_b/train"]:
            assert time.monotonic() < deadline, runs  # TensorBoard loads event files in the background
            time.sleep(0.5)
        scalars = _get_json(url + "data/plugin/scalars/tags")
        assert set(scalars) == {"run_a/train", "run_b/train"} and "epoch_loss" in scalars["run_a/train"]
    except BaseException:
        process.kill()
        raise
    _stop(process, signal.SIGINT, lines)


def test_binding_beyond_loopback_warns_and_sigterm_stops_cleanly(logdir):
    process, match, lines = _start(str(logdir / "run_a"), "--host", "0.0.0.0", "--port", "0")
    try:
        assert _listening_addresses(int(match.group(3))) == {"0.0.0.0"}
        assert any(line.startswith("tx-board: warning: binding to 0.0.0.0") for line in lines)
    except BaseException:
        process.kill()
        raise
    _stop(process, signal.SIGTERM, lines)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("box.lan", False),
    ],
)
def test_only_loopback_hosts_count_as_local(host, loopback):
    assert _is_loopback(host) is loopback


def test_missing_logdir_is_a_one_line_error(tmp_path):
    missing = tmp_path / "no_such_runs"
    result = subprocess.run([str(TX_BOARD), str(missing)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"tx-board: error: logdir {missing} does not exist"]
    assert result.stdout == ""


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_during_the_tensorflow_import_waits_for_it_then_stops(monkeypatch, signal_number):
    """The signal that lands mid-import does not cut into it (it once surfaced as an ImportError, once not
    at all): the import finishes, then the stop comes as KeyboardInterrupt, and the handlers are back."""
    finished: list[bool] = []

    def import_hit_by_a_signal() -> None:
        os.kill(os.getpid(), signal_number)
        time.sleep(0.2)  # Python runs a pending handler between bytecodes: this nap is where it would
        finished.append(True)

    monkeypatch.setattr(board, "start_tensorflow", import_hit_by_a_signal)
    saved = {number: signal.getsignal(number) for number in board.STOP_SIGNALS}
    try:
        for number in saved:  # as main() sets them: a stop that cut into the import would raise there
            signal.signal(number, signal.default_int_handler)
        with pytest.raises(KeyboardInterrupt):
            board._start_tensorflow_then_honour_stop()
        assert finished == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) is signal.default_int_handler
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
