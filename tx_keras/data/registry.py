"""Task lookup by the `data.name` config key."""

from collections.abc import Callable, Mapping
from typing import Any

from tx_keras.data.associative_recall import build_associative_recall
from tx_keras.data.fact_tables import build_fact_table
from tx_keras.data.parallel_text import build_parallel_text
from tx_keras.data.streamed_parallel_text import build_streamed_parallel_text
from tx_keras.data.symbol_tasks import build_symbol_task
from tx_keras.data.task import Task
from tx_keras.data.task_config import TaskConfig, task_config
from tx_keras.data.translation import build_translation

_BUILDERS: dict[str, Callable[[Any], Task]] = {
    "translation": build_translation,
    "copy": build_symbol_task,
    "reverse": build_symbol_task,
    "sort": build_symbol_task,
    "parallel_text": build_parallel_text,
    "lookup": build_fact_table,
    "modular_addition": build_fact_table,
    "associative_recall": build_associative_recall,
}


def build_task(cfg: Mapping | TaskConfig) -> Task:
    """Build the task named by `cfg["name"]` (a dict, an OmegaConf DictConfig or a TaskConfig)."""
    config = task_config(cfg)
    if getattr(config, "stream", False):  # data=parallel_text with data.stream=true
        return build_streamed_parallel_text(config)
    return _BUILDERS[config.name](config)
