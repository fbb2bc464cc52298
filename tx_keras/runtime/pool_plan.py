"""TensorFlow's thread pools for a command whose graph runs as independent chains of ops (row parts),
set by the command before TensorFlow's runtime starts.

Each chain (a part of a batch's rows: a training step's, a decoding loop's) is a run of ops one after the
other. On one intra-op thread and one inter-op thread per part, each core runs one chain without handing
its ops to another thread; under TensorFlow's defaults (one thread per core in both pools) the parts cost
time instead (docs/decisions/row-parts.md and docs/decisions/decoding-pools.md). The
pools belong to the process, so only the commands (tx-train, tx-translate, tx-bench's workers) call this,
never the library. A user's own TF_NUM_INTRAOP_THREADS or TF_NUM_INTEROP_THREADS (or a parallel sweep's
thread budget, training/run/job.py) is left as it is, a GPU keeps the defaults, and a process whose runtime
runs already keeps its own pools.
"""

from __future__ import annotations

import os

POOL_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def given_pools() -> list[str]:
    """The pool variables set in this process's environment (a user's, or a parallel sweep's budget)."""
    return [name for name in POOL_VARIABLES if os.environ.get(name)]


def plan_pools(parts: int, chains: str) -> str:
    """Set the pools for `parts` row parts of `chains` ("the step", "decoding") through
    `tf.config.threading`, or leave them (module docstring); a line for the log saying which."""
    given = given_pools()
    if given:  # the user's, or a parallel sweep's budget: the parts follow them (thread_pools.py)
        return f"thread pools: left as {given[0]}={os.environ[given[0]]} sets them"
    if parts == 1:
        return f"thread pools: TensorFlow's defaults ({chains} in one part)"
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return f"thread pools: TensorFlow's defaults ({chains} on a GPU)"
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(parts)
    except RuntimeError:  # the runtime runs already (a reused worker, a notebook): its pools stay
        return "thread pools: as this process's TensorFlow runtime started them"
    return f"thread pools: 1 intra-op thread, {parts} inter-op threads ({chains} in {parts} row parts)"
