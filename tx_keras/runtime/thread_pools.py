"""The sizes of TensorFlow's two thread pools, as this process will run them: the intra-op pool, over
which one op splits its work, and the inter-op pool, on which independent ops run side by side.

Each is `tf.config.threading`'s setting (the commands' pool plan sets it: runtime/pool_plan.py), else
its environment variable (read when TensorFlow's runtime starts: a user's, or a parallel sweep job's
budget, training/run/job.py), else TensorFlow's own default, one thread per usable core. Decoding
(decoding/row_parts.py) and training (models/row_parts_step.py) read them to decide how many independent
chains of ops to build."""

from __future__ import annotations

import os

from tx_keras.runtime.cpu_share import usable_cores


def intra_op_threads() -> int:
    """Threads one op may split its work over."""
    import tensorflow as tf

    return _threads(tf.config.threading.get_intra_op_parallelism_threads(), "TF_NUM_INTRAOP_THREADS")


def inter_op_threads() -> int:
    """Ops TensorFlow's executor can run at the same time."""
    import tensorflow as tf

    return _threads(tf.config.threading.get_inter_op_parallelism_threads(), "TF_NUM_INTEROP_THREADS")


def _threads(setting: int, variable: str) -> int:
    return setting or int(os.environ.get(variable) or 0) or usable_cores()
