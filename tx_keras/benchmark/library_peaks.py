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
import tempfile

from tx_keras.benchmark.worker_process import WorkerFailed

WORKER = "tx_keras.cli.peak_worker"
# TF_ENABLE_ONEDNN_OPTS value per library name as the JSON records it.
LIBRARIES = {"onednn": "1", "eigen": "0"}


def _answer(library: str, process: subprocess.Popen, stderr) -> str:
    """The worker's next stdout line; WorkerFailed (tx-bench's one-line error, as for its other worker
    processes) with its stderr's tail if it ended instead."""
    line = process.stdout.readline()
    if line:
        return line
    process.wait()
    stderr.seek(0)
    raise WorkerFailed(
        f"the {library} matmul peak process exited with code {process.returncode}: "
        f"{stderr.read()[-1000:].strip()}"
    )


def library_peaks(dtypes: list[str], n: int) -> dict[str, dict]:
    """Every library's peaks by name: {"onednn": the state TensorFlow reported, "peaks": {dtype: FLOP/s}}.

    The processes start TensorFlow side by side (seconds each), then measure one at a time, so neither
    rate is taken while the other process runs. A library TensorFlow could not switch to shows the state
    it reported instead, so a reader sees it was not measured."""
    workers = {}
    try:
        for library, value in LIBRARIES.items():
            stderr = tempfile.TemporaryFile(mode="w+")
            process = subprocess.Popen(
                [sys.executable, "-m", WORKER, str(n), ",".join(dtypes)],
                env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": value},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
            workers[library] = (process, stderr)
        for library, (process, stderr) in workers.items():
            while _answer(library, process, stderr).strip() != "ready":
                pass
        peaks = {}
        for library, (process, stderr) in workers.items():
            process.stdin.write("go\n")
            process.stdin.flush()
            while not (line := _answer(library, process, stderr)).startswith("{"):
                pass
            peaks[library] = json.loads(line)
        return peaks
    finally:
        for process, stderr in workers.values():
            if process.poll() is None:
                process.kill()
            process.wait()
            stderr.close()


def best_peaks(rates_by_source: dict[str, dict[str, float]]) -> dict[str, dict]:
    """For each dtype, the highest rate any source reached (each library's process, and this run's own
    measurements): {dtype: {"flops_per_s": best, "source": where}}."""
    best: dict[str, dict] = {}
    for source, rates in rates_by_source.items():
        for dtype, rate in rates.items():
            if rate > best.get(dtype, {"flops_per_s": 0.0})["flops_per_s"]:
                best[dtype] = {"flops_per_s": rate, "source": source}
    return best
