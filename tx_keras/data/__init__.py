"""Tasks (synthetic grammars, symbol ablations, fact tables, parallel corpora) and their tf.data pipeline.

The names below are imported on first use (PEP 562), so a light caller (the config tree importing
`tx_keras.data.task_config`, the export codecs) does not pull in TensorFlow, tensorflow-text or tqdm.
"""

from tx_keras.lazy_names import lazy_names

_HOMES = {
    "TASKS": "tx_keras.data.task_config",
    "Task": "tx_keras.data.task",
    "Vocabulary": "tx_keras.data.vocabulary",
    "build_task": "tx_keras.data.registry",
    "make_dataset": "tx_keras.data.pipeline",
}

__all__ = sorted(_HOMES)

__getattr__ = lazy_names(__name__, _HOMES)
