"""What a run leaves once it ends: summary.json, its final scores as scalars and its HParams row."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tx_keras.run_folder.scalar_writer import scalar_writer
from tx_keras.run_folder.summary import write_summary
from tx_keras.runtime.tensorflow_presence import tensorflow_installed
from tx_keras.training.logging_config import LoggingConfig


def metric_tag(name: str) -> str:
    """`test_exact_match` -> `final/test_exact_match`: one Scalars group, after Keras' `epoch_*` curves."""
    return f"final/{name}"


def _log_final(run_dir: Path, metrics: dict[str, float], step: int) -> None:
    """Final metrics as scalars in the run folder itself: the HParams metric columns and the Scalars tab."""
    writer = scalar_writer(run_dir)  # tf.summary's, or TensorBoard's own without TensorFlow
    for name, value in metrics.items():
        writer.scalar(metric_tag(name), value, step)
    writer.close()


def record_run(logging: LoggingConfig, run_dir: Path, summary: dict[str, Any], started: float) -> None:
    """summary.json, plus the final scalars and the HParams row (with its status, its columns the
    summary's `config`) when logging is on."""
    summary["wall_time_s"] = round(time.perf_counter() - started, 2)
    metrics = summary.setdefault("metrics", {})
    if logging.tensorboard:
        _log_final(run_dir, metrics, summary.get("epochs", 0))
        if tensorflow_installed():  # the HParams plugin's summaries are tf.summary's
            from tx_keras.training.run.hparams import write_hparams

            tags = [metric_tag(name) for name in metrics]
            write_hparams(run_dir, summary["config"], summary["status"], tags)
    write_summary(run_dir, summary)
