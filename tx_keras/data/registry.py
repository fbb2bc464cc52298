"""Task lookup by the `data.name` config key.

Each builder's module is imported when its task is asked for: the text tasks need TensorFlow (their
tokenizers), the embedded ones only numpy, so a JAX run without TensorFlow can build those.
"""

from collections.abc import Mapping
from importlib import import_module

from tx_keras.data.task import Task
from tx_keras.data.task_config import TaskConfig, task_config

# name -> (module of tx_keras.data, builder function)
_BUILDERS: dict[str, tuple[str, str]] = {
    "translation": ("translation", "build_translation"),
    "copy": ("symbol_tasks", "build_symbol_task"),
    "reverse": ("symbol_tasks", "build_symbol_task"),
    "sort": ("symbol_tasks", "build_symbol_task"),
    "parallel_text": ("parallel_text", "build_parallel_text"),
    "lookup": ("fact_tables", "build_fact_table"),
    "modular_addition": ("fact_tables", "build_fact_table"),
    "associative_recall": ("associative_recall", "build_associative_recall"),
}


def build_task(cfg: Mapping | TaskConfig) -> Task:
    """Build the task named by `cfg["name"]` (a dict, an OmegaConf DictConfig or a TaskConfig)."""
    config = task_config(cfg)
    if getattr(config, "stream", False):  # data=parallel_text with data.stream=true
        module, builder = "streamed_parallel_text", "build_streamed_parallel_text"
    else:
        module, builder = _BUILDERS[config.name]
    return getattr(import_module(f"tx_keras.data.{module}"), builder)(config)
