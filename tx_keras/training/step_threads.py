"""TensorFlow's thread pools for a run whose graph step is cut into row parts, set by the command before
TensorFlow's runtime starts.

Row parts (models/row_parts_step.py) pay only with one intra-op thread and an inter-op thread per part;
under TensorFlow's default pools they cost time. The pools are the process's, so the commands that train
(tx-train, tx-bench's real path) choose them, never the library: for `trainer.step_parts: auto`, two
parts on a CPU of 2 usable cores (the one size measured: docs/performance.md, "The step in two row
parts"), else TensorFlow's defaults; for N, N parts. The pools are set through `tf.config.threading`
before TensorFlow's runtime starts (a sweep's worker process keeps the pools of its first job, and a
process whose runtime runs already keeps its own); the model's step reads them back (`auto_parts`). A
user's own TF_NUM_INTRAOP_THREADS or TF_NUM_INTEROP_THREADS, or a sweep's thread budget
(training/job.py), is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tx_keras.runtime.cpu_share import usable_cores
from tx_keras.training.compiled_step import step_is_compiled

AUTO_CORES = 2  # auto cuts the step where the process has this many cores (measured there only)
POOL_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def planned_parts(trainer: Mapping, cores: int) -> int:
    """The parts `trainer` asks for on `cores` cores: its step_parts, or for auto 2 where a TensorFlow
    graph step of one replica runs on AUTO_CORES cores, else 1."""
    parts = trainer.get("step_parts", "auto")
    if parts != "auto":
        return int(parts)
    graph_step = not step_is_compiled(trainer) and trainer.get("distribution", "none") == "none"
    return 2 if graph_step and cores == AUTO_CORES else 1


def plan_step_threads(trainer: Mapping) -> str:
    """Before TensorFlow's runtime starts: set its pools for the planned parts (module docstring).
    Returns a line for the run's log saying what was chosen."""
    given = [name for name in POOL_VARIABLES if os.environ.get(name)]
    if given:  # the user's, or a parallel sweep's budget; the step is cut if they give 1 intra-op thread
        return f"thread pools: left as {given[0]}={os.environ[given[0]]} sets them"
    parts = planned_parts(trainer, usable_cores())
    if parts == 1:
        return "thread pools: TensorFlow's defaults (the step in one part)"
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return "thread pools: TensorFlow's defaults (the step runs on a GPU)"
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(parts)
    except RuntimeError:  # the runtime runs already (a reused worker, a notebook): its pools stay
        return "thread pools: as this process's TensorFlow runtime started them"
    return f"thread pools: 1 intra-op thread, {parts} inter-op threads (the step in {parts} row parts)"
