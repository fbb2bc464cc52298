"""Task lookup by the `data.name` config key."""

from collections.abc import Callable, Mapping
from functools import partial

from tx_keras.data.associative_recall import build_associative_recall
from tx_keras.data.fact_tables import build_fact_table
from tx_keras.data.parallel_text import build_parallel_text
from tx_keras.data.symbol_tasks import build_symbol_task
from tx_keras.data.task import Task
from tx_keras.data.translation import build_translation

_BUILDERS: dict[str, Callable[[Mapping], Task]] = {
    "translation": build_translation,
    "copy": partial(build_symbol_task, "copy"),
    "reverse": partial(build_symbol_task, "reverse"),
    "sort": partial(build_symbol_task, "sort"),
    "parallel_text": build_parallel_text,
    "lookup": partial(build_fact_table, "lookup"),
    "modular_addition": partial(build_fact_table, "modular_addition"),
    "associative_recall": build_associative_recall,
}
TASKS = list(_BUILDERS)


def build_task(cfg: Mapping) -> Task:
    """Build the task named by `cfg["name"]` (a dict or an OmegaConf DictConfig) from its other keys."""
    name = cfg.get("name")
    if name not in _BUILDERS:
        raise ValueError(f"data.name={name!r} is not a task; choose one of: {', '.join(TASKS)}")
    return _BUILDERS[name](cfg)
