"""The one detokenizer: each join rule, the EOS cut, and the same text for metrics and serving."""

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.data import build_task
from tx_keras.data.detokenizer import Detokenizer
from tx_keras.export.word_codec import WordCodec
from tx_keras.special_tokens import EOS, PAD, SOS, SPECIALS

WORDPIECE = [*SPECIALS, "l'", "##hom", "##me", "est", "-ce", "Salut", "!"]
ROWS = np.array(
    [
        [SOS, 4, 5, 6, 7, EOS, 9, PAD],  # after EOS nothing counts
        [SOS, 9, 10, EOS, PAD, PAD, PAD, PAD],
        [SOS, EOS, 4, 4, 4, 4, 4, 4],  # empty output
        [4, 5, 6, 7, 8, 9, 10, 4],  # no EOS: every token
    ]
)


@pytest.mark.parametrize(
    ("join", "expected"),
    [
        ("wordpiece", ["l'homme est", "Salut !", "", "l'homme est -ce Salut ! l'"]),
        ("characters", ["l'##hom##meest", "Salut!", "", "l'##hom##meest-ceSalut!l'"]),
        ("words", ["l'##hom ##me est", "Salut !", "", "l'##hom ##me est -ce Salut ! l'"]),
    ],
)
def test_join_rules_and_the_eos_cut(join, expected):
    detokenizer = Detokenizer(WORDPIECE, join)
    assert detokenizer.texts(ROWS) == expected
    graph = [text.decode() for text in detokenizer(tf.constant(ROWS)).numpy()]
    assert graph == expected  # the Python view is the graph's output, not a second implementation


def test_characters_turn_the_space_token_back_into_a_space():
    detokenizer = Detokenizer([*SPECIALS, "a", "▁", "b"], "characters")
    assert detokenizer.texts([[SOS, 4, 5, 6, EOS]]) == ["a b"]
    assert detokenizer.texts(np.zeros((0, 3), np.int32)) == []


def test_tokens_show_pad_as_empty():
    tokens = Detokenizer(WORDPIECE, "wordpiece").tokens(tf.constant([[SOS, 5, EOS, PAD]])).numpy()
    assert tokens.tolist() == [[b"<sos>", b"##hom", b"<eos>", b""]]


def test_unknown_join_is_refused():
    with pytest.raises(ValueError, match="join='bpe'; choose one of: wordpiece, characters, words"):
        Detokenizer(WORDPIECE, "bpe")


def test_metrics_and_the_exported_codec_give_the_same_text(tmp_path):
    """The synthetic grammar's elision (`l' afrique` -> `l'afrique`) through both paths."""
    sizes = {"num_train": 64, "num_validation": 4, "num_test": 32}
    task = build_task({"name": "translation", "seed": 3, **sizes})
    task.source_vocab.to_file(tmp_path / "source.txt")
    task.target_vocab.to_file(tmp_path / "target.txt")
    codec = WordCodec(tmp_path / "source.txt", tmp_path / "target.txt", task.source_length)
    target = task.splits["test"][1]
    served = [text.decode() for text in codec.decode(tf.constant(target)).numpy()]
    assert served == task.detokenize_targets(target)
    assert any("l'" in text and "l' " not in text for text in served)
