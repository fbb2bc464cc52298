"""window_batches forms, a window at a time, the very batches (rows, order, padding) that tf.data's
bucket_by_sequence_length forms one row at a time, incomplete batches carried across windows included."""

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.data.batching.window_buckets import single_rows, window_batches

WIDTHS = [4, 6, 8, 12, 16, 20]


def _windows(rows: list[tuple[np.ndarray, np.ndarray]], window: int) -> tf.data.Dataset:
    """`rows` as windows of `window` rows in window_batches' layout (an empty window in the middle too)."""
    chunks = [rows[i : i + window] for i in range(0, len(rows), window)]
    chunks.insert(1, [])

    def layout(chunk):
        lengths = [np.array([len(side) for side in sides], np.int64) for sides in zip(*chunk, strict=True)]
        values = [np.concatenate(sides).astype(np.int32) for sides in zip(*chunk, strict=True)]
        return values[0], lengths[0], values[1], lengths[1]

    empty = (np.zeros(0, np.int32), np.zeros(0, np.int64)) * 2
    laid = [layout(chunk) if chunk else empty for chunk in chunks]
    signature = (tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int64)) * 2
    return tf.data.Dataset.from_generator(lambda: iter(laid), output_signature=signature)


def _random_rows(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, WIDTHS[-1] + 1, size=(count, 2))
    return [(rng.integers(1, 50, size=s), rng.integers(1, 50, size=t)) for s, t in lengths]


def _as_lists(dataset: tf.data.Dataset) -> list[tuple[list, list]]:
    return [(source.numpy().tolist(), target.numpy().tolist()) for source, target in dataset]


@pytest.mark.parametrize(("window", "budget"), [(7, 48), (50, 64), (1000, 128)])
def test_the_batches_are_bucket_by_sequence_length_s_in_its_order(window, budget):
    rows = _random_rows(300, seed=window)
    sizes = [max(1, budget // w) for w in WIDTHS]
    signature = (tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32))
    expected = tf.data.Dataset.from_generator(lambda: iter(rows), output_signature=signature)
    expected = expected.bucket_by_sequence_length(
        lambda source, target: tf.maximum(tf.size(source), tf.size(target)),
        bucket_boundaries=[w + 1 for w in WIDTHS],
        bucket_batch_sizes=[*sizes, 1],
        pad_to_bucket_boundary=True,
    )
    batches = _as_lists(window_batches(_windows(rows, window), WIDTHS, sizes))
    assert batches == _as_lists(expected)
    # Every row once; each batch is padded to its bucket's width with the bucket's full size but the last.
    assert sum(len(source) for source, _ in batches) == len(rows)
    assert {len(source[0]) for source, _ in batches} <= set(WIDTHS)
    assert sum(len(source) < sizes[WIDTHS.index(len(source[0]))] for source, _ in batches) <= len(WIDTHS)


def test_single_rows_gives_each_row_unpadded_in_order():
    rows = _random_rows(40, seed=1)
    got = [(s.numpy().tolist(), t.numpy().tolist()) for s, t in single_rows(_windows(rows, 9))]
    assert got == [(s.tolist(), t.tolist()) for s, t in rows]
