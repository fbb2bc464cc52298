"""Tasks (synthetic grammars, symbol ablations, fact tables, parallel corpora) and their tf.data pipeline.

The names below are imported on first use (PEP 562), so a light caller (the config tree importing
`tx_keras.data.task_config`, the export codecs) does not pull in TensorFlow, tensorflow-text or tqdm.
"""

from tx_keras.lazy_names import lazy_names

__getattr__, __all__ = lazy_names(
    __name__,
    task_config=("TASKS",),
    task=("Task",),
    vocabulary=("Vocabulary",),
    registry=("build_task",),
    **{"batching.pipeline": ("make_dataset",)},
)
