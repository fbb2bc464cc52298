"""The vocabulary cache (data/vocabulary_cache.py): two large WordPiece vocabularies are learned at once (one
in a worker process) and equal those learned in turn, small ones are learned here; a second call learns
nothing; a cached vocabulary that the tokenizer cannot build from, or whose content is not the one written
under its key, is learned again with one warning, and one that cannot be used right after learning is a
one-line CorpusError."""

import logging

import pytest
import tensorflow as tf

from tx_keras.data import vocabulary_cache
from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.text_format import TextFormat
from tx_keras.data.vocabulary_cache import cached_tokenizers
from tx_keras.data.vocabulary_learning import learn_vocabulary

_SOURCES = [f"the {w}cat sat on mat number {i} today" for i, w in enumerate(["", "big ", "small "] * 40)]
_TARGETS = [f"le {w}chat assis numero {i} aujourd'hui" for i, w in enumerate(["", "gros ", "petit "] * 40)]
_LOGGER = "tx_keras.data.vocabulary_cache"


def _workers(monkeypatch) -> list:
    """Records the jobs handed to worker processes (they still run there)."""
    handed = []
    original = vocabulary_cache.map_in_processes

    def recording(function, arguments, workers):
        handed.extend(arguments)
        return original(function, arguments, workers)

    monkeypatch.setattr(vocabulary_cache, "map_in_processes", recording)
    return handed


def test_two_vocabularies_learned_at_once_equal_those_learned_in_turn(tmp_path, caplog, monkeypatch):
    source, target = TextFormat("wordpiece", True), TextFormat("wordpiece", False)
    wanted = [(_SOURCES, source), (_TARGETS, target)]
    monkeypatch.setattr(vocabulary_cache, "WORKER_WORDS", 1)  # these few words learned as a large corpus
    handed = _workers(monkeypatch)
    with caplog.at_level(logging.INFO, logger=_LOGGER):
        learned = [vocabulary for vocabulary, _ in cached_tokenizers(wanted, 60, tmp_path / "cache")]
    assert [job[0] for job in handed] == [_SOURCES]  # the first in a worker, the second here
    expected = [learn_vocabulary(texts, form, 60) for texts, form in wanted]
    assert [v.tokens for v in learned] == [v.tokens for v in expected]
    assert learned[0].tokens != learned[1].tokens and "chat" in learned[1].tokens
    assert caplog.text.count("vocabulary: learning 60 wordpiece tokens") == 2
    suffixes = sorted(p.suffix for p in (tmp_path / "cache").iterdir())  # no worker files
    assert suffixes == [".sha256", ".sha256", ".txt", ".txt"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=_LOGGER):
        again = [vocabulary for vocabulary, _ in cached_tokenizers(wanted, 60, tmp_path / "cache")]
    assert [v.tokens for v in again] == [v.tokens for v in expected] and "learning" not in caplog.text


def test_small_vocabularies_are_learned_here_without_a_worker(tmp_path, monkeypatch):
    """A worker's start (~5 s) would cost more than learning these few words (milliseconds)."""
    handed = _workers(monkeypatch)
    wanted = [(_SOURCES, TextFormat("wordpiece", True)), (_TARGETS, TextFormat("wordpiece", False))]
    learned = [vocabulary for vocabulary, _ in cached_tokenizers(wanted, 60, tmp_path)]
    assert handed == [] and [v.tokens for v in learned] == [learn_vocabulary(*w, 60).tokens for w in wanted]


def _cached_file(tmp_path):
    wanted = [(_SOURCES, TextFormat("wordpiece"))]
    ((vocabulary, _),) = cached_tokenizers(wanted, 60, tmp_path)
    (path,) = tmp_path.glob("*.txt")
    return wanted, vocabulary, path


def test_a_poisoned_vocabulary_is_learned_again_in_one_warning(tmp_path, caplog):
    """The issue's poison: "\\x00" and "##\\x00" tokens, which stop FastWordpieceTokenizer's build with a C++
    "zero-length key" error. Written with a matching digest, so only the tokens themselves are wrong."""
    import hashlib

    wanted, vocabulary, path = _cached_file(tmp_path)
    poisoned = path.read_text(encoding="utf-8") + "\x00\n##\x00\n"
    path.write_text(poisoned, encoding="utf-8")
    path.with_name(path.name + ".sha256").write_text(hashlib.sha256(poisoned.encode()).hexdigest())
    with caplog.at_level(logging.INFO, logger=_LOGGER):
        ((again, tokenizer),) = cached_tokenizers(wanted, 60, tmp_path)
    assert again.tokens == vocabulary.tokens
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "control character" in warnings[0] and "learning it again" in warnings[0]
    assert "\n" not in warnings[0]
    ids = tokenizer.tokenize(tf.constant(["the cat"])).to_list()[0]
    assert again.decode(ids) == ["the", "cat"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_text(path.read_text(encoding="utf-8").replace("cat", "dog")),  # edited
        lambda path: path.write_bytes(path.read_bytes()[:25]),  # truncated
        lambda path: path.with_name(path.name + ".sha256").unlink(),  # from before the digest
        lambda path: path.write_bytes(b"\xff\xfe<pad>\n"),  # not UTF-8
    ],
)
def test_a_vocabulary_that_is_not_what_its_key_names_is_learned_again(tmp_path, caplog, damage):
    wanted, vocabulary, path = _cached_file(tmp_path)
    damage(path)
    with caplog.at_level(logging.INFO, logger=_LOGGER):
        ((again, _),) = cached_tokenizers(wanted, 60, tmp_path)
    assert again.tokens == vocabulary.tokens
    assert "is unusable" in caplog.text and "vocabulary: learning 60" in caplog.text


def test_a_vocabulary_unusable_right_after_learning_is_one_line(tmp_path, monkeypatch):
    """Should the learner ever write a vocabulary the tokenizer refuses, the run ends in one CorpusError
    line, and the bad file is not left in the cache for the next run."""
    from tx_keras.data import vocabulary_cache

    def broken(texts, text_format, size):
        class Learned:
            tokens = ["<pad>", "<sos>", "<eos>", "<unk>", "a\x00"]

        return Learned()

    monkeypatch.setattr(vocabulary_cache, "learn_vocabulary", broken)
    with pytest.raises(CorpusError) as raised:
        cached_tokenizers([(_SOURCES, TextFormat("wordpiece"))], 60, tmp_path)
    message = str(raised.value)
    assert "\n" not in message and "cannot use the vocabulary just learned" in message
    assert "control character" in message and not list(tmp_path.glob("*.txt"))
