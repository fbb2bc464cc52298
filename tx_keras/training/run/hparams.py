"""One row per run in TensorBoard's HParams tab: the flattened config, the status and the final metrics."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tensorflow as tf
from tensorboard.plugins.hparams import api as hp

from tx_keras.run_folder.flatten import flatten

# The config groups whose keys become hyper-parameter columns.
HPARAM_GROUPS = ("model", "data", "trainer")


def flatten_hparams(config: Mapping[str, Any]) -> dict[str, Any]:
    """`model.num_heads`-style keys with scalar values (None becomes "null": HParams has no null), from a
    run's whole config as summary.json records it."""
    flat = {"seed": config["seed"], **flatten({group: config[group] for group in HPARAM_GROUPS})}
    return {key: "null" if value is None else value for key, value in flat.items()}


def write_hparams(run_dir: Path, config: Mapping[str, Any], status: str, metric_tags: list[str]) -> None:
    """Write the HParams session for `run_dir` and the experiment definition that lists the columns.

    Written at the end of a run, failed ones included, so the `status` column is the final word.
    `metric_tags` (`final/test_exact_match`, ...) are the scalars the run wrote into its own folder;
    the metric columns show their last value.
    """
    flat = {**flatten_hparams(config), "status": status}
    metrics = [
        hp.Metric(tag, display_name=tag.removeprefix("final/").replace("_", " ")) for tag in metric_tags
    ]
    writer = tf.summary.create_file_writer(str(run_dir))
    with writer.as_default(), tf.summary.record_if(True):
        hp.hparams_config(hparams=[hp.HParam(name) for name in flat], metrics=metrics)
        hp.hparams(flat)
    writer.close()
