"""Hydra's config tree, installed as the package `tx_keras.conf` so `tx-train` finds it from any folder.

Importing it (Hydra does, to read the tree) registers every group's schema in Hydra's ConfigStore:
`schema/model` (ModelConfig, tx_keras/models/model_config.py), `schema/trainer` (TrainerConfig,
tx_keras/training/trainer_config.py), `schema/logging` (LoggingConfig, tx_keras/training/logging_config.py),
`schema/export` (ExportConfig, tx_keras/export/export_config.py) and `schema/data/<task>`
(tx_keras/data/task_config.py). Each gives its knobs' types and defaults, so a preset states only what it
changes and an unknown key or a wrong type fails at composition. It also registers the resolver that names
sweep job folders (tx_keras/run_folder/job_folder.py).
"""

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from tx_keras.data.task_config import register_schemas
from tx_keras.export.export_config import ExportConfig
from tx_keras.models.model_config import ModelConfig
from tx_keras.run_folder.job_folder import register_job_folder
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.run.run_config import RunKeys
from tx_keras.training.trainer_config import TrainerConfig


def _writable(node: DictConfig) -> DictConfig:
    """A frozen dataclass (and each frozen one nested in it) becomes a read-only node that the presets and
    the command line could not override: keep its keys, types and defaults, drop the read-only flag."""
    OmegaConf.set_readonly(node, False)
    for value in node.values():
        if isinstance(value, DictConfig):
            _writable(value)
    return node


register_schemas()
register_job_folder()  # names the sweep job folders (conf/hydra/default.yaml: hydra.sweep.subdir)
for _name, _schema in {
    "model": ModelConfig,
    "trainer": TrainerConfig,
    "logging": LoggingConfig,
    "export": ExportConfig,
    "run": RunKeys,
}.items():
    ConfigStore.instance().store(group="schema", name=_name, node=_writable(OmegaConf.structured(_schema)))
