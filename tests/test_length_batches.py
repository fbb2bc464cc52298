"""Length bucketing: every pair once per epoch, replayable from (seed, epoch), far less padding."""

import numpy as np
import pytest

from tx_keras.data import make_dataset
from tx_keras.data.length_batches import length_batches, padding_fraction, row_lengths


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


@pytest.mark.parametrize("shuffle", [True, False])
def test_bucketed_dataset_trims_each_batch_and_covers_the_split(shuffle):
    source, target = _rows(300, 20, seed=4), _rows(300, 22, seed=5)
    dataset = make_dataset(source, target, 16, shuffle=shuffle, batching="bucket", batch_tokens=200)
    seen = []
    for (encoder, decoder), labels in dataset:
        encoder, decoder, labels = encoder.numpy(), decoder.numpy(), labels.numpy()
        assert encoder.shape[1] == row_lengths(encoder).max()  # cut to the longest source
        assert decoder.shape == labels.shape
        seen += [tuple(row[row > 0]) for row in encoder]
    assert sorted(seen) == sorted(tuple(row[row > 0]) for row in source)


def test_unknown_batching_is_refused():
    with pytest.raises(ValueError, match="choose one of: fixed, bucket"):
        make_dataset(_rows(4, 5), _rows(4, 5), 2, shuffle=False, batching="sorted")
