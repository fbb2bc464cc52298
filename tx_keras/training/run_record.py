"""What a run leaves once it ends: summary.json, its final scores as scalars and its HParams row."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import tensorflow as tf
from omegaconf import DictConfig

from tx_keras.run_folder.summary import write_summary
from tx_keras.training.hparams import write_hparams


def metric_tag(name: str) -> str:
    """`test_exact_match` -> `final/test_exact_match`: one Scalars group, after Keras' `epoch_*` curves."""
    return f"final/{name}"


def _log_final(run_dir: Path, metrics: dict[str, float], step: int) -> None:
    """Final metrics as scalars in the run folder itself: the HParams metric columns and the Scalars tab."""
    with tf.summary.create_file_writer(str(run_dir)).as_default(), tf.summary.record_if(True):
        for name, value in metrics.items():
            tf.summary.scalar(metric_tag(name), value, step=step)


def record_run(cfg: DictConfig, run_dir: Path, summary: dict[str, Any], started: float) -> None:
    """summary.json, plus the final scalars and the HParams row (with its status) when logging is on."""
    summary["wall_time_s"] = round(time.perf_counter() - started, 2)
    metrics = summary.setdefault("metrics", {})
    if cfg.logging.tensorboard:
        _log_final(run_dir, metrics, summary.get("epochs", 0))
        write_hparams(run_dir, cfg, summary["status"], [metric_tag(name) for name in metrics])
    write_summary(run_dir, summary)
