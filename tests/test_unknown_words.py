"""A word seen only in the held-out splits maps to UNK: the vocabularies are learned on train alone, so
validation and test figures never profit from their own words."""

from pathlib import Path

import numpy as np
import pytest

from tests.test_parallel_text import _pairs
from tx_keras.data import Vocabulary, build_task

# One pair per marker; each marker's letter occurs nowhere else in the corpus.
MARKERS = [chr(code) * 3 for code in range(0x3B1, 0x3C9)]  # Greek alpha ... omega


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("unknown") / "pairs.tsv"
    pairs = _pairs() + [(f"I see {marker}.", f"Je vois {marker}.") for marker in MARKERS]
    path.write_text("".join(f"{en}\t{fr}\n" for en, fr in pairs), encoding="utf-8")
    return path


@pytest.mark.parametrize(("tokenizer", "unknowns_per_marker"), [("wordpiece", 1), ("characters", 3)])
def test_a_word_seen_only_in_test_maps_to_unk(corpus, tokenizer, unknowns_per_marker):
    task = build_task(
        {
            "name": "parallel_text",
            "path": str(corpus),
            "seed": 0,
            "num_validation": 12,
            "num_test": 40,
            "vocab_size": 300,
            "tokenizer": tokenizer,
            "cache_dir": str(corpus.parent / "cache"),
        }
    )
    in_train = {marker for marker in MARKERS for source, _ in task.texts("train") if marker in source}
    seen = 0
    for split in ("validation", "test"):
        source_ids, target_ids = task.splits[split]
        for row, (source, _) in enumerate(task.texts(split)):
            marker = next((m for m in MARKERS if m in source), None)
            if marker is None:
                continue
            seen += split == "test"
            assert marker not in in_train
            for ids in (source_ids[row], target_ids[row]):
                unknown = np.count_nonzero(ids == Vocabulary.UNK)
                assert unknown == unknowns_per_marker, (split, source, ids)
            # the rest of the sentence is known: "I see" / "Je vois" are in every split
            assert task.detokenize_target(target_ids[row]).startswith("Je vois")
    assert seen >= 2  # the seeded split put several marker pairs in test
    assert in_train  # some markers were trained on: their letters are in the vocabulary
    train_source = task.splits["train"][0]
    trained = [row for row, (s, _) in enumerate(task.texts("train")) if any(m in s for m in in_train)]
    assert all(np.count_nonzero(train_source[row] == Vocabulary.UNK) == 0 for row in trained)
