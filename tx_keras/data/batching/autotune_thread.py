"""tf.data pipelines without the autotuning thread, whose sleep stalled every epoch's end."""

from __future__ import annotations

import tensorflow as tf


def without_autotune_thread(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset` with tf.data's autotuning model turned off.

    That model runs in a thread that sleeps for its optimisation period, which doubles while an iterator
    lives, and deleting a finished iterator waits for the thread to wake. Keras' `fit` deletes each epoch's
    iterator as the next epoch starts, so every epoch boundary stalled with both cores idle: 5.4 s after a
    15-s epoch, up to 18 s in tx-bench's real path (docs/decisions/tfdata-autotune.md). The pipelines'
    `AUTOTUNE` settings still work without it: a parallel map then runs one call per core, a prefetch
    keeps its own buffer tuner.
    """
    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)
