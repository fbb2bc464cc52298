"""How many row parts tx-train cuts a step into, and the thread pools it sets for them before TensorFlow's
runtime starts (runtime/pool_plan.py).

Row parts (models/row_parts_step.py) pay only with one intra-op thread and an inter-op thread per part;
under TensorFlow's default pools they cost time. For `trainer.step_parts: auto`, two parts on a CPU of 2
usable cores (the one size measured: docs/decisions/row-parts.md), else TensorFlow's
defaults; for N, N parts. A sweep's worker process keeps the pools of its first job; the model's step
reads them back (`auto_parts`), so a user's own pool variables decide the parts.
"""

from __future__ import annotations

from tx_keras.runtime.compiled_step import step_is_compiled
from tx_keras.runtime.cpu_share import usable_cores
from tx_keras.runtime.pool_plan import plan_pools
from tx_keras.training.trainer_config import TrainerConfig

AUTO_CORES = 2  # auto cuts the step where the process has this many cores (measured there only)


def planned_parts(trainer: TrainerConfig, cores: int) -> int:
    """The parts `trainer` asks for on `cores` cores: its step_parts, or for auto 2 where a TensorFlow
    graph step of one replica runs on AUTO_CORES cores, else 1."""
    if trainer.step_parts != "auto":
        return int(trainer.step_parts)
    graph_step = not step_is_compiled(trainer) and trainer.distribution == "none"
    return 2 if graph_step and cores == AUTO_CORES else 1


def plan_step_threads(trainer: TrainerConfig) -> str:
    """Before TensorFlow's runtime starts: the pools for the planned parts (pool_plan.plan_pools).
    Returns a line for the run's log saying what was chosen."""
    return plan_pools(planned_parts(trainer, usable_cores()), "the step")
