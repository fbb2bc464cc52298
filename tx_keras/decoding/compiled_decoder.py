"""The one place where a decoder written in `keras.ops` is compiled for the backend it runs on, and where a
compiled decoder is run over a whole split."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import keras
import numpy as np
from keras import ops

from tx_keras.decoding.row_parts import concurrent_loops, in_row_parts

if TYPE_CHECKING:
    from tx_keras.models import Transformer

# JAX compiles one program per input shape: batches are padded to these sizes so that a split decoded in
# batches of every row count and source width compiles a few programs, not one per batch.
SMALLEST_SIZE_CLASS = 8


def size_class(size: int) -> int:
    """`size` rounded up to a power of two, at least SMALLEST_SIZE_CLASS: 8, 16, 32, ..."""
    return max(SMALLEST_SIZE_CLASS, 1 << max(size - 1, 0).bit_length())


def compile_decoder(decode: Callable, model: Transformer) -> Callable:
    """`decode` (source ids (B, Ts) int32 -> ids (B, T), or (ids, attention (B, ..., Ts))) compiled once.

    TensorFlow: a `tf.function` over any (B, Ts), the shape the SavedModel's signatures call it with; it
    returns tensors. The rows are decoded in as many independent loops as TensorFlow runs at once
    (`row_parts`: two on two cores or more), so that both cores work. JAX: `jax.jit` with the model's
    weights passed in (read at every call, so a decoder made before training decodes with the trained
    weights), batches padded to `size_class` rows (copies of their own rows, which stop when those do)
    and columns (padding, which the masks hide; at most the model's max_source_length); it returns the
    unpadded outputs as numpy arrays.
    """
    backend = keras.config.backend()
    if backend == "tensorflow":
        return _tensorflow(decode)
    if backend == "jax":
        return _jax(decode, model)
    raise ValueError(f"decoding runs on the tensorflow or jax backend, not {backend}")


def _tensorflow(decode: Callable) -> Callable:
    import tensorflow as tf

    parts = concurrent_loops()
    if parts > 1:
        decode = in_row_parts(decode, parts)
    # autograph=False: the loop is an explicit while loop, so there is nothing to convert, and converting
    # the model's Python code each trace cost seconds (an export traces several).
    return tf.function(decode, input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)


def _jax(decode: Callable, model: Transformer) -> Callable:
    import jax

    widest = model.max_source_length

    @jax.jit
    def run(values: list, source_ids):
        # KerasHub's generate function does the same: the variables read as the traced `values`.
        with keras.StatelessScope(state_mapping=list(zip(model.variables, values, strict=True))):
            return decode(source_ids)

    def call(source_ids) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        source = np.asarray(source_ids, np.int32)
        rows, width = source.shape
        # Never wider than the position table: JAX reads a position past it as NaN, not as an error.
        padded = np.zeros((size_class(rows), max(width, min(size_class(width), widest))), np.int32)
        if rows:
            padded[:, :width] = source[np.arange(len(padded)) % rows]
        outputs = run([variable.value for variable in model.variables], padded)
        if isinstance(outputs, tuple):
            ids, attention = outputs
            return np.asarray(ids)[:rows], np.asarray(attention)[:rows, ..., :width]
        return np.asarray(outputs)[:rows]

    return call


def decode_in_batches(decode: Callable, source_ids: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """Run a decoder over a whole split without holding every sentence in one batch."""
    source_ids = np.asarray(source_ids, np.int32)
    starts = range(0, len(source_ids), batch_size)
    parts = [ops.convert_to_numpy(decode(source_ids[i : i + batch_size])) for i in starts]
    return np.concatenate(parts, axis=0)
