"""One kernel library's matmul peaks, in a process of its own: TensorFlow reads TF_ENABLE_ONEDNN_OPTS once,
when it starts, so measuring the rate with oneDNN on and off takes one process each
(benchmark/library_peaks.py starts them with the variable set). Each starts TensorFlow, prints `ready`
and waits for a line on stdin before measuring, so the processes start side by side and measure one
after the other; then it prints one JSON line: the oneDNN state TensorFlow reports and the peak FLOP/s
of each dtype asked for.

Usage: python -m tx_keras.cli.peak_worker N DTYPE[,DTYPE...]
"""

from __future__ import annotations

import json
import sys

from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.keras_backend import select_backend


def main() -> None:
    n, dtypes = int(sys.argv[1]), sys.argv[2].split(",")
    select_backend("tensorflow")  # before Keras's first import
    configure_allocator()  # as tx-bench's own process
    from tx_keras.runtime.quiet_startup import start_tensorflow

    start_tensorflow()
    from tx_keras.benchmark.machine import onednn_enabled
    from tx_keras.benchmark.matmul_peak import matmul_peak

    print("ready", flush=True)
    if not sys.stdin.readline():  # the parent is gone
        return
    peaks = {dtype: matmul_peak(dtype, n, repeats=3) for dtype in dtypes}
    print(json.dumps({"onednn": onednn_enabled(), "peaks": peaks}), flush=True)


if __name__ == "__main__":
    main()
