"""Everything `tx-bench` measures in one TensorFlow run, returned as one JSON-ready dict: the synthetic
training blocks (training_blocks.py, backend-neutral), then the TensorFlow-only parts: the real tf.data
training path, then greedy decoding and the SavedModel in a fresh process (decoding_process.py)."""

from __future__ import annotations

from tx_keras.benchmark.decoding_process import decoding_in_own_process
from tx_keras.benchmark.real_path import real_path_in_own_process
from tx_keras.benchmark.real_path_race import gather_worth, parts_worth
from tx_keras.benchmark.settings import BenchSettings
from tx_keras.benchmark.training_blocks import finish, training_blocks


def run_benchmark(settings: BenchSettings) -> dict:
    """Parity check, matched precision blocks, the real training path (when `settings.real_path` is
    given), decoding speed. `every_position` adds ours trained on every position to the blocks (peers.py)
    and races it on the real path; `row_parts` races the real path against itself on TensorFlow's default
    thread pools, the whole batch a step (real_path_race.py). The real path's rows each train in a fresh
    process, its thread pools as tx-train plans them (real_path.py); decoding runs in one on
    tx-translate's pools and, where those differ, in one more on TensorFlow's, the two timed in turns
    (decoding_process.py).

    Raises ParityError before timing anything when a peer's size differs from ours by more than 2 %,
    WorkerFailed when the decoding process ends without its rates or a real-path process without its
    row.
    """
    results = training_blocks(settings)
    real_path = settings.real_path
    if real_path is not None and settings.every_position:  # against itself at every position
        results["real_path"], results["real_path_gather"] = gather_worth(real_path)
    if real_path is not None and settings.row_parts:  # against itself on TensorFlow's default pools
        first, results["real_path_parts"] = parts_worth(real_path)
        results.setdefault("real_path", first)
    if real_path is not None and "real_path" not in results:
        results["real_path"] = real_path_in_own_process(real_path)
    results |= decoding_in_own_process(settings)
    return finish(results)
