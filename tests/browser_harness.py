"""What the two browser tests share: Debian's Chromium, real tiny runs trained side by side, and tx-board
served on a free loopback port."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

CHROMIUM = Path("/usr/bin/chromium")
BIN = Path(sys.executable).parent
# A fresh profile (Playwright makes one per launch) and no background traffic: on a closed network,
# Chromium's own connections otherwise get refused in bursts that stall page loads.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_browser() -> ModuleType:
    """Playwright's sync API, or the calling test module skipped with the reason (no Chromium, no
    Playwright)."""
    if not CHROMIUM.exists():
        pytest.skip(
            "Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it)",
            allow_module_level=True,
        )
    return pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )


def launch(playwright):
    """Headless Debian Chromium with the flags above."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def get_json(url: str, body: dict | None = None):
    """GET `url` (or POST `body` as JSON) and decode the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


# The two runs both browser modules look at, as in a sweep folder: folder -> (model.num_heads, overrides).
# Tiny and 3 epochs each on the default task with 5,000 of its 20,000 training pairs and 200 each to
# validate and test: enough for the attention to take shape, so the screenshots show more than uniform
# weights (heads_4 translates 99 % of its test pairs exactly). 4 heads exports every
# head; its early stopping (validation exact-match, a curve the board shows) cannot end it before its 3
# epochs: no target score, and a patience of 3. heads_1 is a run stopped early: configured for 30 epochs
# (so logging.attention_maps=auto logs the first and the last), it stops after its third (no improvement
# of the loss by 1000, patience 2), as a run ended by its time budget would, and must log that epoch.
SWEEP = {
    "heads_4": (4, ["export.attention=heads", "trainer.epochs=3", "trainer.early_stopping.patience=3"]),
    "heads_1": (
        1,
        [
            "trainer.epochs=30",
            "trainer.early_stopping.monitor=loss",
            "trainer.early_stopping.min_delta=1000",
            "trainer.early_stopping.patience=2",
        ],
    ),
}
SWEEP_TRAIN = ["model=tiny", "data.num_train=5000", "data.num_validation=200", "data.num_test=200",
               "trainer.early_stopping.stop_at=null", "logging.verbose=0"]  # fmt: skip


def train_sweep(root: Path) -> Path:
    """The SWEEP runs under `root`, trained in parallel (once per session: tests/conftest.py)."""
    runs = {name: [*SWEEP_TRAIN, f"model.num_heads={heads}", *more] for name, (heads, more) in SWEEP.items()}
    return train_side_by_side(root, runs, timeout=600)


# The run the "why this word?" tests explain (tests/test_explorer_explanations.py, the browser tests): the
# reverse task at a fixed length of 6 (as conf/data/reverse.yaml, shorter), where output word t is aligned
# with source word 5-t, small enough for model=tiny to learn exactly in 6 epochs (~50 s on an idle 2-core
# machine); every head exported, and the validation head importance logged.
REVERSE = [
    "model=tiny",
    "data=reverse",
    "data.vocab_size=10",
    "data.length=6",
    "data.min_length=6",
    "data.num_train=3000",
    "data.num_validation=64",
    "data.num_test=64",
    "trainer.epochs=6",
    "trainer.early_stopping.stop_at=null",
    "export.attention=heads",
    "logging.head_importance=true",
    "logging.verbose=0",
]


def train_side_by_side(root: Path, runs: dict[str, list[str]], timeout: float) -> Path:
    """Real `tx-train` runs (folder name -> overrides) under `root`, trained in parallel to save time."""
    jobs = {
        name: subprocess.Popen(
            [str(BIN / "tx-train"), *overrides, f"hydra.run.dir={root / name}"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name, overrides in runs.items()
    }
    for name, process in jobs.items():
        output, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0, f"tx-train {name} failed:\n{output[-3000:]}"
    return root


@contextmanager
def serving(logdir: Path, ready: Callable[[str], bool], what: str, timeout: float = 60) -> Iterator[str]:
    """tx-board on a free loopback port over `logdir`; yields its URL once `ready(url)` holds."""
    process = subprocess.Popen(
        [str(BIN / "tx-board"), str(logdir), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"TensorBoard at (http://127\.0\.0\.1:\d+/) ", line)
        assert match, f"tx-board printed {line!r}"
        url = match.group(1)
        deadline = time.monotonic() + timeout
        while not ready(url):
            assert time.monotonic() < deadline, f"TensorBoard never listed {what}"
            time.sleep(0.5)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:  # tests/test_board.py checks the Ctrl-C exit itself; here the server is not the subject
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # TensorBoard's threads sometimes outlive a Ctrl-C (30 s of a
            process.kill()  # teardown in the default run waited on one)
            process.wait(timeout=30)
