"""The top-level keys of a run's config as a dataclass, beside the groups that compose it.

Hydra validates conf/config.yaml against it (conf/__init__.py registers it as `schema/run`), as it
validates each group against its own schema (`schema/model`, `schema/trainer`, ...), so `seed=abc` fails
while the config is composed. The groups' slots are typed `Any`: each group brings its own schema.
Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunConfig:
    """One run: the composed groups and the keys of the run itself."""

    model: Any = None  # schema/model (tx_keras/models/model_config.py)
    data: Any = None  # schema/data/<task> (tx_keras/data/task_config.py)
    trainer: Any = None  # schema/trainer (tx_keras/training/trainer_config.py)
    logging: Any = None  # schema/logging (tx_keras/training/logging_config.py)
    export: Any = None  # schema/export (tx_keras/export/export_config.py)
    seed: int = 0  # seeds Python, NumPy, TensorFlow and Keras, and the task's sampling
    resume: str | None = None  # a run folder to continue
    # seeds: runs per configuration (another branch's conf/config.yaml adds the key and its comment);
    # here so that the schema accepts it when the two are merged.
    seeds: int = 1
