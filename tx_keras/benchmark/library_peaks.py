"""The best dense matmul rate this machine reaches in any kernel library TensorFlow offers: the honest
ceiling for MFU.

A ceiling measured only in the running process's library flatters every MFU when another library is
faster: on the AVX2 EPYC TensorFlow's default Eigen kernels reached 113.7 GFLOP/s float32 where oneDNN
reached 157.7. TensorFlow chooses between them once, when it starts (TF_ENABLE_ONEDNN_OPTS), so each is
measured in a worker process of its own (worker_process.py), float32 and bfloat16 alike; the higher rate
of each dtype is the machine's peak.
"""

from __future__ import annotations

import os

from tx_keras.benchmark.worker_process import Channel, WorkerProcess

PEAKS = "tx_keras.benchmark.library_peaks:serve_peaks"  # the worker's function (worker_process.py)
# TF_ENABLE_ONEDNN_OPTS value per library name as the JSON records it.
LIBRARIES = {"onednn": "1", "eigen": "0"}


def serve_peaks(spec: dict, channel: Channel) -> None:
    """In the worker (spec: n, dtypes): answer `ready` once TensorFlow has started, wait for a request,
    then answer the oneDNN state TensorFlow reports and the peak FLOP/s of each dtype."""
    from tx_keras.benchmark.machine import onednn_enabled
    from tx_keras.benchmark.matmul_peak import matmul_peak

    channel.answer({"ready": True})
    if channel.request() is None:  # the parent is gone
        return
    peaks = {dtype: matmul_peak(dtype, spec["n"], repeats=3) for dtype in spec["dtypes"]}
    channel.answer({"onednn": onednn_enabled(), "peaks": peaks})


def library_peaks(dtypes: list[str], n: int) -> dict[str, dict]:
    """Every library's peaks by name: {"onednn": the state TensorFlow reported, "peaks": {dtype: FLOP/s}}.

    The processes start TensorFlow side by side (seconds each), then measure one at a time, so neither
    rate is taken while the other process runs. A library TensorFlow could not switch to shows the state
    it reported instead, so a reader sees it was not measured. Raises WorkerFailed (tx-bench's one-line
    error) when a process ends without its answer."""
    workers: dict[str, WorkerProcess] = {}
    try:
        for library, value in LIBRARIES.items():
            env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": value}
            spec = {"n": n, "dtypes": dtypes}
            workers[library] = WorkerProcess(PEAKS, spec, f"{library} matmul peak process", env)
        for worker in workers.values():
            worker.answer()  # ready
        peaks = {}
        for library, worker in workers.items():
            worker.ask("go")
            peaks[library] = worker.answer()
        return peaks
    finally:
        for worker in workers.values():
            worker.close(kill=True)


def best_peaks(rates_by_source: dict[str, dict[str, float]]) -> dict[str, dict]:
    """For each dtype, the highest rate any source reached (each library's process, and this run's own
    measurements): {dtype: {"flops_per_s": best, "source": where}}."""
    best: dict[str, dict] = {}
    for source, rates in rates_by_source.items():
        for dtype, rate in rates.items():
            if rate > best.get(dtype, {"flops_per_s": 0.0})["flops_per_s"]:
                best[dtype] = {"flops_per_s": rate, "source": source}
    return best
