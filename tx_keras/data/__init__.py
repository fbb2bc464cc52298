"""Tasks (synthetic grammars, symbol ablations, fact tables, parallel corpora) and their tf.data pipeline.

The names below are imported on first use (PEP 562), so a light caller (the config tree importing
`tx_keras.data.task_config`, the export codecs) does not pull in TensorFlow, tensorflow-text or tqdm.
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "TASKS": "tx_keras.data.task_config",
    "Task": "tx_keras.data.task",
    "Vocabulary": "tx_keras.data.vocabulary",
    "build_task": "tx_keras.data.registry",
    "make_dataset": "tx_keras.data.pipeline",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
