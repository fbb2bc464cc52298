"""The best dense matmul rate this machine reaches in any kernel library TensorFlow offers: the honest
ceiling for MFU.

A ceiling measured only in the running process's library flatters every MFU when another library is
faster: on the AVX2 EPYC TensorFlow's default Eigen kernels reached 113.7 GFLOP/s float32 where oneDNN
reached 157.7. TensorFlow chooses between them once, when it starts (TF_ENABLE_ONEDNN_OPTS), so each is
measured in a process of its own (cli/peak_worker.py), float32 and bfloat16 alike; the higher rate of
each dtype is the machine's peak.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

WORKER = "tx_keras.cli.peak_worker"
# TF_ENABLE_ONEDNN_OPTS value per library name as the JSON records it.
LIBRARIES = {"onednn": "1", "eigen": "0"}


class PeakWorkerFailed(RuntimeError):
    """A kernel library's peak process ended without its answer."""


def library_peak(library: str, dtypes: list[str], n: int) -> dict:
    """One library's peaks: {"onednn": the state TensorFlow reported, "peaks": {dtype: FLOP/s}}."""
    environment = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": LIBRARIES[library]}
    result = subprocess.run(
        [sys.executable, "-m", WORKER, str(n), ",".join(dtypes)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode or not lines:
        raise PeakWorkerFailed(
            f"the {library} matmul peak process exited with code {result.returncode}: "
            f"{result.stderr[-1000:].strip()}"
        )
    return json.loads(lines[-1])


def library_peaks(dtypes: list[str], n: int) -> dict[str, dict]:
    """Every library's peaks by name; a library TensorFlow could not switch to (its reported state is
    not the one asked for) is kept with that state, so a reader sees it was not measured."""
    return {library: library_peak(library, dtypes, n) for library in LIBRARIES}


def best_peaks(rates_by_source: dict[str, dict[str, float]]) -> dict[str, dict]:
    """For each dtype, the highest rate any source reached (each library's process, and this run's own
    measurements): {dtype: {"flops_per_s": best, "source": where}}."""
    best: dict[str, dict] = {}
    for source, rates in rates_by_source.items():
        for dtype, rate in rates.items():
            if rate > best.get(dtype, {"flops_per_s": 0.0})["flops_per_s"]:
                best[dtype] = {"flops_per_s": rate, "source": source}
    return best
