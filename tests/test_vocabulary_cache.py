"""Two WordPiece vocabularies to learn are learned at once (one in a worker process): the same vocabularies
as learned one after the other here, cached, and a second call learns nothing."""

import logging

from tx_keras.data.parallel_text import learned_vocabularies
from tx_keras.data.text_format import TextFormat
from tx_keras.data.vocabulary_learning import learn_vocabulary

_SOURCES = [f"the {w}cat sat on mat number {i} today" for i, w in enumerate(["", "big ", "small "] * 40)]
_TARGETS = [f"le {w}chat assis numero {i} aujourd'hui" for i, w in enumerate(["", "gros ", "petit "] * 40)]


def test_two_vocabularies_learned_at_once_equal_those_learned_in_turn(tmp_path, caplog):
    source, target = TextFormat("wordpiece", True), TextFormat("wordpiece", False)
    wanted = [(_SOURCES, source), (_TARGETS, target)]
    with caplog.at_level(logging.INFO, logger="tx_keras.data.parallel_text"):
        learned = learned_vocabularies(wanted, 60, tmp_path / "cache")
    expected = [learn_vocabulary(texts, form, 60) for texts, form in wanted]
    assert [v.tokens for v in learned] == [v.tokens for v in expected]
    assert learned[0].tokens != learned[1].tokens and "chat" in learned[1].tokens
    assert caplog.text.count("vocabulary: learning 60 wordpiece tokens") == 2
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".txt", ".txt"]  # no worker files
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tx_keras.data.parallel_text"):
        again = learned_vocabularies(wanted, 60, tmp_path / "cache")
    assert [v.tokens for v in again] == [v.tokens for v in expected] and "learning" not in caplog.text
