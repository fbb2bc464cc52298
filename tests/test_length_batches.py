"""Length bucketing: every pair once per epoch, replayable from (seed, epoch), far less padding."""

import os

import numpy as np
import pytest

from tests.malloc_probe import probe
from tx_keras.data import make_dataset
from tx_keras.data.batching.length_batches import (
    batch_width,
    bucket_widths,
    computed_rows,
    epoch_widths,
    length_batches,
    padding_fraction,
    row_lengths,
)
from tx_keras.data.batching.shape_classes import class_widths


def _rows(count: int, width: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.zeros((count, width), np.int32)
    for i, length in enumerate(rng.integers(2, width + 1, count)):
        rows[i, :length] = rng.integers(4, 50, length)
    return rows


def test_every_row_once_and_replayable():
    lengths = row_lengths(_rows(1000, 30))
    batches = length_batches(lengths, 32, None, seed=3, epoch=2)
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    assert all(len(b) <= 32 for b in batches)
    again = length_batches(lengths, 32, None, seed=3, epoch=2)
    assert all((a == b).all() for a, b in zip(batches, again, strict=True))
    other = length_batches(lengths, 32, None, seed=3, epoch=3)
    assert any(len(a) != len(b) or (a != b).any() for a, b in zip(batches, other, strict=False))


def test_token_budget_bounds_each_batch():
    lengths = row_lengths(_rows(2000, 40))
    batches = length_batches(lengths, 32, 300, seed=0, epoch=0)
    assert sorted(np.concatenate(batches).tolist()) == list(range(2000))
    assert all(len(b) * lengths[b].max() <= 300 or len(b) == 1 for b in batches)
    assert max(len(b) for b in batches) > 32  # short pairs fill bigger batches


def test_bucketing_cuts_padding():
    source = _rows(2000, 40, seed=1)
    target = np.pad(source, ((0, 0), (0, 2)))  # real text: a pair's two sides have related lengths
    fixed = padding_fraction(source, target, None)
    lengths = np.maximum(row_lengths(source), row_lengths(target))
    bucketed = padding_fraction(source, target, length_batches(lengths, 64, None, seed=0))
    assert fixed > 0.4 and bucketed < 0.1


def test_bucket_widths_round_up_by_at_most_a_quarter():
    widths = bucket_widths(65)
    assert widths.tolist() == [4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 65]
    lengths = np.arange(4, 66)
    rounded = batch_width(lengths, widths)
    assert (rounded >= lengths).all() and (rounded <= np.ceil(lengths * 1.25)).all()
    assert bucket_widths(3).tolist() == [3]


def test_an_epoch_has_few_fixed_shapes():
    lengths = row_lengths(_rows(5000, 40, seed=2))
    widths = bucket_widths(int(lengths.max()))
    shapes = set()
    for epoch in range(3):
        batches = length_batches(lengths, 32, 512, seed=0, epoch=epoch)
        assert sorted(np.concatenate(batches).tolist()) == list(range(5000))
        for rows in batches:
            width = int(batch_width(lengths[rows].max(), widths))
            assert (batch_width(lengths[rows], widths) == width).all()  # one bucket per batch
            assert len(rows) <= 512 // width
            shapes.add((len(rows), width))
    full = {(rows, width) for rows, width in shapes if rows == 512 // width}
    assert len(full) == len(widths)  # one full-batch shape per bucket, the same in every epoch
    assert len(shapes) <= len(widths) + 3 * len(widths)  # plus each bucket's last batch per epoch


@pytest.mark.parametrize("shuffle", [True, False])
def test_bucketed_dataset_pads_each_batch_to_its_bucket_and_covers_the_split(shuffle):
    source, target = _rows(300, 20, seed=4), _rows(300, 22, seed=5)
    widths = bucket_widths(22)
    dataset = make_dataset(source, target, 16, shuffle=shuffle, batching="bucket", batch_tokens=200)
    seen, shapes = [], set()
    for (encoder, decoder), labels in dataset:
        encoder, decoder, labels = encoder.numpy(), decoder.numpy(), labels.numpy()
        longest = max(row_lengths(encoder).max(), row_lengths(labels).max() + 1)
        width = int(batch_width(longest, widths))
        assert encoder.shape[1] == min(width, 20)  # the bucket's width, not each batch's own longest
        assert decoder.shape == labels.shape == (len(encoder), min(width, 22) - 1)
        shapes.add(encoder.shape)
        seen += [tuple(row[row > 0]) for row in encoder]
    assert sorted(seen) == sorted(tuple(row[row > 0]) for row in source)
    assert len(shapes) <= 2 * len(widths)


def test_a_resumed_epoch_replays_the_same_batches():
    """What makes resume bit-identical: epoch k's batches depend on (seed, k) only, not on what ran before."""
    import tensorflow as tf

    source, target = _rows(200, 16, seed=6), _rows(200, 18, seed=7)

    def epoch_batches(dataset):
        return [tuple(x.numpy().tobytes() for x in (e, d, y)) for (e, d, y) in _flat(dataset)]

    epoch = tf.Variable(0, dtype=tf.int64)
    straight = make_dataset(source, target, 8, True, seed=5, epoch=epoch, batching="bucket", batch_tokens=96)
    first = epoch_batches(straight)
    epoch.assign(1)
    second = epoch_batches(straight)
    resumed = make_dataset(source, target, 8, True, seed=5, epoch=1, batching="bucket", batch_tokens=96)
    assert epoch_batches(resumed) == second != first


def _flat(dataset):
    for (encoder, decoder), labels in dataset:
        yield encoder, decoder, labels


def test_unknown_batching_is_refused():
    with pytest.raises(ValueError, match="choose one of: fixed, bucket"):
        make_dataset(_rows(4, 5), _rows(4, 5), 2, shuffle=False, batching="sorted")


@pytest.mark.skipif(not os.confstr("CS_GNU_LIBC_VERSION"), reason="needs glibc")
def test_bucketed_dataset_leaves_malloc_thresholds_alone():
    """tf.data.Dataset.from_generator sets M_TRIM_THRESHOLD=128 KiB process-wide, which pins glibc's mmap
    threshold there: every buffer above 128 KiB was then mmapped and faulted in anew (the kernel-time tax)."""
    setup = """
import numpy as np
from tx_keras.data import make_dataset
rows = np.tile(np.arange(1, 9, dtype=np.int32), (64, 1))
for batch in make_dataset(rows, rows, 8, True, batching="bucket", batch_tokens=64):
    pass
"""
    faults = int(probe(setup, 1 << 20, "system")[-1])
    assert faults < 100, faults  # 9 x 256 pages if each 1 MB buffer were mmapped anew


def _real_text_lengths(count: int, seed: int = 0) -> np.ndarray:
    """Longest side per pair, skewed short as Tatoeba's (most pairs 6-14 tokens, a tail to 40)."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(rng.lognormal(2.3, 0.4, count)), 3, 40).astype(np.int64)


def test_shape_classes_are_the_widths_of_least_padding():
    lengths = _real_text_lengths(20000)
    widths = class_widths(lengths, 6)
    assert len(widths) == 6 and widths[-1] == lengths.max()

    def positions(candidate):
        return batch_width(lengths, np.asarray(candidate)).sum()

    assert positions(widths) < positions([8, 12, 16, 24, 32, 40])  # half-octave widths, as many
    for i in range(5):  # no single width moved by one does better
        for step in (-1, 1):
            moved = widths.copy()
            moved[i] += step
            if (np.diff(moved) > 0).all():
                assert positions(widths) <= positions(moved)
    assert class_widths(np.array([5, 5, 7]), 6).tolist() == [5, 7]  # fewer lengths than classes


def test_shape_classes_give_an_epoch_one_shape_per_class():
    lengths = _real_text_lengths(20000)
    shapes = {None: set(), 6: set()}
    for classes in shapes:
        widths = epoch_widths(lengths, classes)
        for epoch in range(3):
            batches = length_batches(lengths, 64, 1024, seed=1, epoch=epoch, classes=classes)
            assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
            for rows in batches:
                width = int(batch_width(lengths[rows].max(), widths))
                shapes[classes].add((computed_rows(rows, width, 64, 1024, classes), width))
    assert shapes[6] == {(1024 // w, w) for w in class_widths(lengths, 6)}  # each batch: its width's rows
    assert len(shapes[None]) > 3 * len(shapes[6])


def test_shape_classes_pad_short_batches_with_rows_that_count_no_token_and_report_them_as_padding():
    source, target = _rows(300, 20, seed=8), _rows(300, 22, seed=9)
    lengths = np.maximum(row_lengths(source), row_lengths(target))
    widths = class_widths(lengths, 3)
    settings = {"seed": 2, "batching": "bucket", "batch_tokens": 200, "shape_classes": 3}
    seen, shapes, computed = [], set(), 0
    for (encoder, decoder), labels in make_dataset(source, target, 16, True, **settings).as_numpy_iterator():
        real = row_lengths(labels) > 0
        longest = max(row_lengths(encoder[real]).max(), row_lengths(labels[real]).max() + 1)
        width = int(batch_width(longest, widths))
        assert len(labels) == 200 // width  # the width's full rows, also in the bucket's last batch
        assert (encoder[~real] == encoder[0]).all() and (decoder[~real] == decoder[0]).all()
        shapes.add((encoder.shape, decoder.shape))
        seen += [tuple(row[row > 0]) for row in encoder[real]]
        computed += len(labels) * (encoder.shape[1] + decoder.shape[1] + 1)
    assert sorted(seen) == sorted(tuple(row[row > 0]) for row in source)  # each real row once
    assert len(shapes) == 3
    batches = length_batches(lengths, 16, 200, seed=2, epoch=0, classes=3)
    reported = padding_fraction(source, target, batches, 16, 200, classes=3)
    real_tokens = np.count_nonzero(source) + np.count_nonzero(target)
    assert reported == pytest.approx(1 - real_tokens / computed)


def test_shape_classes_replay_by_seed_and_epoch_and_resume_past_trained_batches():
    import tensorflow as tf

    source, target = _rows(200, 16, seed=6), _rows(200, 18, seed=7)
    settings = {"seed": 5, "batching": "bucket", "batch_tokens": 96, "shape_classes": 3}

    def epoch_batches(dataset):
        return [tuple(x.numpy().tobytes() for x in (e, d, y)) for (e, d, y) in _flat(dataset)]

    epoch = tf.Variable(0, dtype=tf.int64)
    straight = make_dataset(source, target, 8, True, epoch=epoch, **settings)
    first = epoch_batches(straight)
    epoch.assign(1)
    second = epoch_batches(straight)
    assert epoch_batches(make_dataset(source, target, 8, True, epoch=1, **settings)) == second != first
    skip = tf.Variable(3, dtype=tf.int64)
    resumed = make_dataset(source, target, 8, True, epoch=1, skip=skip, **settings)
    assert epoch_batches(resumed) == second[3:]


@pytest.mark.parametrize(
    "options",
    [
        {"batching": "bucket", "batch_tokens": 200, "shuffle": True},
        {"batching": "bucket", "batch_tokens": 200, "shuffle": False},
        {"batching": "fixed", "shuffle": True},
        {"batching": "fixed", "shuffle": False},
    ],
)
def test_no_pipeline_runs_the_autotuning_thread_whose_sleep_stalled_each_epochs_end(options):
    """Deleting an iterator waits for tf.data's autotuning thread to wake (batching/autotune_thread.py): Keras
    deletes one at every epoch boundary, so every training and evaluation pipeline runs without it."""
    source, target = _rows(40, 12), _rows(40, 12, seed=1)
    dataset = make_dataset(source, target, 8, **options)
    assert dataset.options().autotune.enabled is False
    assert sum(int(labels.shape[0]) for _, labels in dataset) >= 40  # every row still comes out
