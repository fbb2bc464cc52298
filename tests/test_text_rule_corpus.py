"""The corpus door of issue 65: 5,000 good pairs and one line holding NUL bytes train in memory and streamed,
the line skipped and counted for its reason, no NUL in any vocabulary; a poisoned or damaged cache (a
vocabulary with a NUL token, prepared parts truncated, a meta.json of garbage) is rebuilt (one warning)."""

import hashlib
import logging
from pathlib import Path

import pytest

from tx_keras.data import build_task
from tx_keras.data.prepared_corpus import prepare_corpus

NUL_LINE = b"bad\x00line\tmit\x00null\n"


def _issue_corpus(folder: Path) -> Path:
    """The issue's corpus: 5,000 good pairs, the NUL line among them."""
    lines = [f"sentence {i} is good.\tla phrase {i} est bonne.\n".encode() for i in range(5000)]
    lines.insert(2500, NUL_LINE)
    path = folder / "nul.tsv"
    path.write_bytes(b"".join(lines))
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return _issue_corpus(tmp_path_factory.mktemp("corpus"))


def _config(corpus: Path, cache: Path, stream: bool) -> dict:
    return {
        "name": "parallel_text",
        "path": str(corpus),
        "cache_dir": str(cache),
        "stream": stream,
        "tokenizer": "wordpiece",
        "vocab_size": 120,
        "num_validation": 50,
        "num_test": 50,
        "stream_sample": 1000,
        "seed": 0,
    }


def _no_nul_anywhere(task) -> None:
    for vocabulary in (task.source_vocab, task.target_vocab):
        assert not any("\x00" in token for token in vocabulary.tokens)
    assert all("\x00" not in source + target for split in task.splits for source, target in task.texts(split))


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_the_nul_corpus_builds_with_the_line_counted_as_control(corpus, tmp_path, stream, caplog):
    with caplog.at_level(logging.INFO):
        task = build_task(_config(corpus, tmp_path / "cache", stream))
    lines = task.report["lines"]
    assert lines["lines"] == 5001 and lines["kept"] == 5000 and lines["control"] == 1
    assert sum(count for key, count in lines.items() if key != "lines") == 5001
    assert (
        "5001 lines, 5000 pairs kept; skipped: 0 malformed, 0 invalid UTF-8, 1 with control characters"
        in (caplog.text)
    )
    _no_nul_anywhere(task)
    source, _ = task.splits["test"]
    assert source.shape[0] == 50 and (source[:, 0] > 3).all()  # real tokens, not UNK, first


def test_a_poisoned_cached_vocabulary_is_learned_again_in_one_warning(corpus, tmp_path, caplog):
    """What the issue's run left behind: a cached vocabulary holding "\\x00" and "##\\x00". Whatever its
    digest says, the tokenizer is never asked to build from it."""
    config = _config(corpus, tmp_path / "cache", stream=False)
    first = build_task(config)
    for path in (tmp_path / "cache" / "vocabularies").glob("*.txt"):
        poisoned = path.read_text(encoding="utf-8") + "\x00\n##\x00\n"
        path.write_text(poisoned, encoding="utf-8")
        path.with_name(path.name + ".sha256").write_text(hashlib.sha256(poisoned.encode()).hexdigest())
    with caplog.at_level(logging.INFO):
        again = build_task(config)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and all("control character" in w and "learning it again" in w for w in warnings)
    assert again.source_vocab.tokens == first.source_vocab.tokens
    assert (again.splits["test"][0] == first.splits["test"][0]).all()


def _prepared(corpus: Path, cache: Path):
    settings = {"source_column": 0, "target_column": 1, "lowercase": False, "max_words": None, "member": None}
    return prepare_corpus(
        [corpus], cache, **settings, num_validation=50, num_test=50, seed=0, sample_size=1000
    )


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda folder: (folder / "train-000.tsv").write_bytes(b"x"), "hold a train-000.tsv of 1 bytes"),
        (lambda folder: (folder / "meta.json").write_bytes(b"\x00garbage"), "have no readable meta.json"),
        (lambda folder: (folder / "sample.tsv").unlink(), "miss sample.tsv"),
        (
            lambda folder: (folder / "test.tsv").write_bytes((folder / "test.tsv").read_bytes().upper()),
            "hold a test.tsv whose content changed",
        ),
    ],
    ids=["truncated part", "garbage meta", "missing part", "edited part"],
)
def test_damaged_prepared_parts_are_prepared_again_in_one_warning(corpus, tmp_path, caplog, damage, said):
    first = _prepared(corpus, tmp_path)
    parts = {path.name: path.read_bytes() for path in first.folder.iterdir()}
    damage(first.folder)
    with caplog.at_level(logging.INFO):
        again = _prepared(corpus, tmp_path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and said in warnings[0] and "preparing them again" in warnings[0]
    assert again.counts == first.counts and again.counts["control"] == 1
    assert {path.name: path.read_bytes() for path in again.folder.iterdir()} == parts  # whole again
