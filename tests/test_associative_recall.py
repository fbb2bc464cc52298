"""Multi-query associative recall: queries first, then the pairs, and the recalled values."""

import pytest

from tx_keras.data import build_task

SIZES = {"num_train": 200, "num_validation": 20, "num_test": 20}


def test_every_target_is_the_value_paired_with_its_query():
    task = build_task({"name": "associative_recall", "seed": 2, **SIZES})
    assert (task.source_length, task.target_length) == (2 * 16 + 16 + 1, 16 + 2)
    assert len(task.source_vocab) == 32 + 32 + 4 and len(task.target_vocab) == 32 + 4
    pair_counts = set()
    for source, target in task.texts("train"):
        words = source.split()
        queries, pairs_region = words[:16], words[16:]  # the i-th query at position i, as its answer
        assert len(pairs_region) % 2 == 0
        keys, values = pairs_region[0::2], pairs_region[1::2]
        pair_counts.add(len(keys))
        assert all(k.startswith("k") for k in keys) and all(v.startswith("v") for v in values)
        assert len(set(keys)) == len(keys)
        table = dict(zip(keys, values, strict=True))
        assert target.split() == [table[query] for query in queries]
    assert min(pair_counts) >= 8 and max(pair_counts) <= 16 and len(pair_counts) > 3


def test_sizes_follow_the_config_and_bad_pair_counts_are_refused():
    task = build_task(
        {
            "name": "associative_recall",
            "num_keys": 6,
            "num_values": 3,
            "min_kv_pairs": 2,
            "max_kv_pairs": 4,
            "num_queries": 5,
            **SIZES,
        }
    )
    assert (task.source_length, task.target_length) == (8 + 5 + 1, 7)
    with pytest.raises(ValueError, match="1 <= min_kv_pairs <= max_kv_pairs <= num_keys"):
        build_task(
            {"name": "associative_recall", "num_keys": 4, "max_kv_pairs": 5, "min_kv_pairs": 2, **SIZES}
        )
