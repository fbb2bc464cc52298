"""A run's config: the top-level keys Hydra composes the groups under, and the typed whole the job reads.

`RunKeys` is Hydra's schema for conf/config.yaml (conf/__init__.py registers it as `schema/run`), so
`seed=abc` fails while the config is composed; its group slots are `Any`, as each group brings its own
schema (`schema/model`, `schema/trainer`, ...). `RunConfig` is the same config read through every group's
dataclass: the job builds it once (training/run/config_check.py) and passes each function the typed part
it needs. Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tx_keras.config_rules import between, check_rules, ruled, seed_range
from tx_keras.data.task_config import TaskConfig
from tx_keras.export.export_config import ExportConfig
from tx_keras.models.model_config import ModelConfig
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.trainer_config import TrainerConfig


@dataclass(frozen=True)
class RunKeys:
    """One run: the composed groups and the keys of the run itself, as Hydra composes them."""

    model: Any = None  # schema/model (tx_keras/models/model_config.py)
    data: Any = None  # schema/data/<task> (tx_keras/data/task_config.py)
    trainer: Any = None  # schema/trainer (tx_keras/training/trainer_config.py)
    logging: Any = None  # schema/logging (tx_keras/training/logging_config.py)
    export: Any = None  # schema/export (tx_keras/export/export_config.py)
    seed: int = ruled(0, seed_range)  # seeds Python, NumPy, TensorFlow and Keras, and the task's sampling
    resume: str | None = None  # a run folder to continue
    seeds: int = ruled(1, between(1, 10**4))  # training seeds per setting of a sweep (launch/seed_axis.py)


@dataclass(frozen=True)
class RunConfig:
    """One run's config, every group typed: what the job passes down."""

    model: ModelConfig
    data: TaskConfig
    trainer: TrainerConfig
    logging: LoggingConfig
    export: ExportConfig
    seed: int = ruled(0, seed_range)
    resume: str | None = None
    seeds: int = ruled(1, between(1, 10**4))

    def __post_init__(self) -> None:
        check_rules(self, "")

    def as_dict(self) -> dict[str, Any]:
        """As summary.json and run.json record it: plain values, the groups first."""
        return dataclasses.asdict(self)
