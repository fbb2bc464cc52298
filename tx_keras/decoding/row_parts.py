"""A batch decoded as independent loops over parts of its rows, which TensorFlow runs at the same time.

A decoding step is a chain of small ops, one after the other: TensorFlow's executor runs each on an
inter-op thread and splits only the larger ones over its intra-op threads, so one core mostly waits. Two
loops over the two halves of the batch are independent chains in one graph, and the executor keeps one on
each core: the same words in about three quarters of the wall time, at the same or less CPU time; four
parts on two cores were slower (docs/decisions/cached-decoder-in-place.md).
On one intra-op thread and two inter-op threads, each half keeps its core without handing ops between
threads: tx-translate plans those pools on 2 cores (`plan_decoding_threads`;
docs/decisions/decoding-pools.md).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from tx_keras.runtime.cpu_share import usable_cores
from tx_keras.runtime.pool_plan import plan_pools
from tx_keras.runtime.thread_pools import inter_op_threads

# Measured on 2 cores only: more parts than that were slower there, and more cores were not at hand.
MOST_PARTS = 2


def concurrent_loops() -> int:
    """How many decoding loops TensorFlow can run at once: its inter-op threads (`tf.config.threading`'s
    setting, else TF_NUM_INTEROP_THREADS, else one per usable core, TensorFlow's own default), at most
    MOST_PARTS. A sweep job with one inter-op thread (training/run/job.py) decodes in one loop."""
    return max(1, min(inter_op_threads(), MOST_PARTS))


def plan_decoding_threads(loops: int | None = MOST_PARTS) -> str:
    """For a command that decodes (tx-translate), before TensorFlow's runtime starts: one intra-op thread
    and MOST_PARTS inter-op threads where the process has MOST_PARTS usable cores (the one size measured)
    and its decoders run that many `loops` (an export's, as its manifest says; None = unknown), else
    TensorFlow's defaults (runtime/pool_plan.py): one loop on one intra-op thread would leave a core idle.
    A line saying which."""
    if usable_cores() != MOST_PARTS:
        return f"thread pools: TensorFlow's defaults (planned for decoding on {MOST_PARTS} cores only)"
    if loops != MOST_PARTS:
        return f"thread pools: TensorFlow's defaults (decoders in {loops or 'an unknown number of'} loops)"
    return plan_pools(MOST_PARTS, "decoding")


def in_row_parts(decode: Callable, parts: int) -> Callable:
    """`decode` (source ids (B, Ts) -> a tensor or a tuple of tensors, each (B, ...)) run on `parts`
    consecutive slices of the rows (a part may be empty: B = 1 decodes one row and zero) and the outputs
    concatenated back in row order. A sentence's words do not depend on the other rows of its batch, so
    they are the same; the loop of each part stops when its own sentences have ended."""
    import tensorflow as tf

    def decode_parts(source_ids):
        rows = tf.shape(source_ids)[0]
        bounds = [rows * part // parts for part in range(parts + 1)]
        outputs = [decode(source_ids[start:end]) for start, end in pairwise(bounds)]
        if isinstance(outputs[0], tuple):
            return tuple(tf.concat(list(each), axis=0) for each in zip(*outputs, strict=True))
        return tf.concat(outputs, axis=0)

    return decode_parts
