"""Hydra's config tree, installed as the package `tx_keras.conf` so `tx-train` finds it from any folder.

Importing it (Hydra does, to read the tree) registers the `data` group's schemas in Hydra's ConfigStore
(`schema/data/<task>`, tx_keras/data/task_config.py): each conf/data/*.yaml names its schema first in its
defaults list, so an unknown key or a wrong type fails at composition.
"""

from tx_keras.data.task_config import register_schemas

register_schemas()
