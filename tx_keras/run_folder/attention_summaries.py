"""Writing the raw attention summaries the explorer reads: every kind, layer and head of each probe
sentence (format: attention_format.py)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from tx_keras.run_folder.attention_format import KINDS, ProbeAttention

BYTES_PER_WEIGHT = 2  # float16


def stack_layers(attention: dict[str, np.ndarray], kind: str) -> np.ndarray:
    """`kind/layer_1`, `kind/layer_2`, ... (batch, heads, Tq, Tk) -> (batch, layers, heads, Tq, Tk)."""
    names = sorted(
        (name for name in attention if name.split("/")[0] == kind), key=lambda n: int(n.rsplit("_", 1)[1])
    )
    return np.stack([np.asarray(attention[name]) for name in names], axis=1)


def probes_within(sizes: list[int], cap_bytes: int) -> int:
    """How many probes, in order, fit in `cap_bytes` together (the per-epoch cap)."""
    total, count = 0, 0
    for size in sizes:
        if total + size > cap_bytes:
            break
        total, count = total + size, count + 1
    return count


def write_attention(records: list[tuple[ProbeAttention, np.ndarray]], step: int) -> None:
    """One tensor summary per probe and kind into the default writer; the tokens ride in its metadata.

    The float16 weights travel as their bits in a uint16 tensor: any float16 tensor makes TensorFlow's
    oneDNN build print "oneDNN supports DT_HALF only on platforms with AVX-512" on stderr, on AVX-512 CPUs
    too (AMD EPYC family 25 model 17). The bytes in the event file are the same either way.
    """
    for record, weights in records:
        assert record.kind in KINDS, record.kind
        bits = tf.constant(np.asarray(weights, np.float16).view(np.uint16))
        tf.summary.write(record.tag, bits, step=step, metadata=record.to_metadata())
