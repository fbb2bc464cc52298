"""The lookup table and modular addition: every fact, one fixed table, memorisation or a held-out share."""

import numpy as np
import pytest

from tx_keras.data import build_task


def _facts(task, split):
    """{(a, b): answer} of a split, read back through the vocabulary."""
    facts = {}
    for source, target in task.texts(split):
        a, b = (int(word) for word in source.split())
        facts[(a, b)] = int(target)
    return facts


def test_modular_addition_holds_every_pair_once_and_its_sum():
    task = build_task({"name": "modular_addition", "modulus": 29, "seed": 3})
    assert (task.source_length, task.target_length) == (3, 3)
    assert len(task.source_vocab) == len(task.target_vocab) == 29 + 4
    facts = _facts(task, "test")
    assert len(task.splits["test"][0]) == len(facts) == 841
    assert all(answer == (a + b) % 29 for (a, b), answer in facts.items())


def test_lookup_table_depends_on_its_table_seed_only_and_training_covers_every_fact():
    first = build_task({"name": "lookup", "seed": 0, "table_seed": 7})
    other_split = build_task({"name": "lookup", "seed": 5, "table_seed": 7})
    other_table = build_task({"name": "lookup", "seed": 0, "table_seed": 8})
    table = _facts(first, "validation")
    assert len(table) == 841
    assert _facts(other_split, "validation") == table  # a run seed does not change the facts
    assert _facts(other_table, "validation") != table
    train = first.splits["train"]
    assert len(train[0]) == 8410  # 10 passes over the 841 facts by default
    trained = {tuple(row) for row in train[0]}
    assert len(trained) == 841
    assert _facts(first, "train") == table  # train and evaluation share one table
    # Not a function of a + b: a random table has many answers for the same sum.
    assert len({answer for (a, b), answer in table.items() if (a + b) % 29 == 0}) > 5
    assert not np.array_equal(first.splits["train"][0], other_split.splits["train"][0])  # the order differs


def test_holdout_keeps_facts_out_of_training():
    task = build_task(
        {"name": "modular_addition", "modulus": 11, "holdout": 0.2, "num_train": 500, "seed": 1}
    )
    train, validation, test = (set(_facts(task, split)) for split in ("train", "validation", "test"))
    assert len(validation) + len(test) == 24 and len(train) == 121 - 24
    assert not train & validation and not train & test and not validation & test
    assert len(task.splits["train"][0]) == 500


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"modulus": 1}, "data.modulus=1 must be >= 2"),
        ({"holdout": 1.0}, "data.holdout=1.0 must be in [0, 1)"),
        ({"modulus": 3, "holdout": 0.01}, "leaves 0 of 9 facts"),
    ],
)
def test_bad_values_are_refused(cfg, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        build_task({"name": "lookup", **cfg})
