"""Hydra's config tree, installed as the package `tx_keras.conf` so `tx-train` finds it from any folder.

Importing it (Hydra does, to read the tree) registers the groups' schemas in Hydra's ConfigStore:
`schema/model` (ModelConfig, tx_keras/models/model_config.py) and `schema/data/<task>`
(tx_keras/data/task_config.py). Each gives its knobs' types and defaults, so a preset states only what it
changes and an unknown key or a wrong type fails at composition.
"""

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from tx_keras.data.task_config import register_schemas
from tx_keras.models.model_config import ModelConfig

register_schemas()
_model_schema = OmegaConf.structured(ModelConfig)
OmegaConf.set_readonly(_model_schema, False)  # frozen in Python; the presets and the command line override it
ConfigStore.instance().store(group="schema", name="model", node=_model_schema)
