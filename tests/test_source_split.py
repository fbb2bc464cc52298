"""split_by_source: no source sentence on two sides, exact split sizes, reproducible with a seed."""

import pytest

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.source_split import split_by_source


def _pairs() -> list[tuple[str, str]]:
    """300 sources with 1 to 4 translations each (750 pairs), sources interleaved as in a real file."""
    pairs = [(f"source {i}", f"translation {i}.{k}") for k in range(4) for i in range(300) if k <= i % 4]
    assert len(pairs) == 750
    return pairs


def _sources(pairs):
    return {source for source, _ in pairs}


def _error(*args, **kwargs) -> str:
    with pytest.raises(CorpusError) as error:
        split_by_source(*args, **kwargs)
    return str(error.value)


def test_no_source_on_two_sides_and_exact_sizes():
    pairs = _pairs()
    splits = split_by_source(pairs, num_validation=50, num_test=60, seed=0)
    assert list(splits) == ["train", "validation", "test"]
    assert len(splits["validation"]) == 50 and len(splits["test"]) == 60
    train, validation, test = (_sources(splits[name]) for name in ("train", "validation", "test"))
    assert not train & validation and not train & test and not validation & test
    assert train | validation | test == _sources(pairs)
    assert set(splits["train"]) | set(splits["validation"]) | set(splits["test"]) <= set(pairs)
    # Train holds every translation of its sources; only the overflowing test/validation source loses some.
    assert len(splits["train"]) == sum(source in train for source, _ in pairs)
    assert len(pairs) - sum(map(len, splits.values())) <= 3 + 3


def test_same_seed_same_split_other_seed_other_split():
    pairs = _pairs()
    first = split_by_source(pairs, 50, 60, seed=7)
    assert split_by_source(list(pairs), 50, 60, seed=7) == first
    other = split_by_source(pairs, 50, 60, seed=8)
    assert _sources(other["test"]) != _sources(first["test"])
    assert len(other["test"]) == 60


def test_surplus_translations_are_dropped_not_moved():
    pairs = [("a", "1"), ("a", "2"), ("a", "3"), ("b", "4"), ("c", "5"), ("d", "6")]
    for seed in range(20):
        splits = split_by_source(pairs, num_validation=1, num_test=2, seed=seed)
        assert len(splits["test"]) == 2 and len(splits["validation"]) == 1
        # Whatever source a split cut, none of its translations appears elsewhere.
        for name, split in splits.items():
            others = [pair for other, rest in splits.items() if other != name for pair in rest]
            assert not _sources(split) & _sources(others)


def test_max_pairs_caps_before_splitting():
    pairs = _pairs()
    splits = split_by_source(pairs, num_validation=20, num_test=30, seed=0, max_pairs=200)
    assert len(splits["test"]) == 30 and len(splits["validation"]) == 20
    assert 200 - 6 <= sum(map(len, splits.values())) <= 200
    assert split_by_source(pairs, 20, 30, seed=0, max_pairs=200) == splits


def test_too_few_pairs_is_an_error_with_the_numbers():
    pairs = [("a", "1"), ("a", "2"), ("b", "3"), ("c", "4")]
    assert _error(pairs, num_validation=1, num_test=3, seed=0) == (
        "4 sentence pairs with 3 distinct sources are too few for num_validation=1 + num_test=3 pairs "
        "and a non-empty training split"
    )
    capped = _error(_pairs(), num_validation=20, num_test=30, seed=0, max_pairs=50)
    assert capped.startswith("50 sentence pairs (max_pairs=50) with ")
    assert capped.endswith(
        " distinct sources are too few for num_validation=20 + num_test=30 pairs "
        "and a non-empty training split"
    )
    assert _error([], 0, 0, seed=0).startswith("0 sentence pairs with 0 distinct sources are too few")
    assert _error(pairs, num_validation=-1, num_test=1, seed=0) == "num_validation=-1 must be >= 0"
    assert _error(pairs, 1, 1, seed=0, max_pairs=0) == "max_pairs=0 must be >= 1"


def test_empty_validation_and_test_are_allowed():
    pairs = _pairs()
    splits = split_by_source(pairs, num_validation=0, num_test=0, seed=3)
    assert splits["validation"] == [] and splits["test"] == []
    assert sorted(splits["train"]) == sorted(pairs)
