"""Property-based tests of the corpus door (issue 65), with Hypothesis: any bytes, any line endings, a BOM,
any column count. Every line read is kept or counted under exactly one reason, the counts add up to the lines
(as universal newlines count them), a streamed corpus cut anywhere counts the same, and every kept text is a
fixed point of the text rule that the tokenizers built from it read back without an error.

The default run keeps a few hundred examples in all (well under a minute); `pytest -m slow` runs the same
properties with ten times as many. Each failure Hypothesis found is a fixed case in the ordinary tests
(test_text_rule.py, test_parallel_corpus.py), named in the closing note of issue 65.
"""

from __future__ import annotations

import io

import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.corpus_ranges import corpus_ranges, range_lines
from tx_keras.data.line_counts import new_counts
from tx_keras.data.parallel_corpus import read_pairs
from tx_keras.data.prepared_corpus import prepare_corpus
from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_rule import (
    CONTROL,
    INVALID_UTF8,
    WHITESPACE,
    RefusedText,
    apply_text_rule,
    clean_text,
    refusal,
)
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.data.vocabulary_learning import learn_vocabulary

# The default run and the slow one (ten times the examples); no deadline: 2 shared cores are noisy.
settings.register_profile(
    "corpus-default",
    max_examples=150,
    deadline=None,
    database=None,  # no .hypothesis folder in the tree: each failure found becomes a fixed case instead
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("corpus-slow", settings.get_profile("corpus-default"), max_examples=1500)
DEFAULT, SLOW = settings.get_profile("corpus-default"), settings.get_profile("corpus-slow")

# Characters a bad export carries, beside plain text: controls (NUL, C1, DEL), line and column breaks,
# invisible and bidirectional marks, compatibility forms, other scripts, astral characters.
_ODD = (
    "\x00\x01\x07\x0b\x0c\x1b\x1f\x7f\x80\x85\x9f\t\r\n"  # controls, tab and line breaks
    " \u00a0\u202f\u2009\u3000\u2028\u200b\u200d\u200e\u202e\u2066\ufeff"  # spaces, invisible marks
    "\ufffd\ufb01\u2026\u00e9e\u0301\u0130\u00df\u03a3"  # compatibility forms, combining, casing
    "\u4e2d\u6587\u0627\u05e9#\U0001f600\U0010ffff"  # other scripts, WordPiece's "#", astral
)
_CHARACTERS = st.one_of(st.sampled_from("abc xyz.!?'-"), st.sampled_from(_ODD), st.characters())
_TEXT = st.text(_CHARACTERS, max_size=12)
_ENDINGS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def corpora(draw) -> bytes:
    """A corpus file's bytes: lines of 0-4 tab-separated columns of odd text, encoded as UTF-8 (unpaired
    surrogates through surrogatepass, so invalid), or raw bytes; mixed line endings, maybe a BOM."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 5)) == 0:
            line = draw(st.binary(max_size=20))
        else:
            columns = draw(st.lists(_TEXT, min_size=0, max_size=4))
            line = "\t".join(columns).encode("utf-8", "surrogatepass")
        lines.append(line + draw(_ENDINGS))
    data = b"".join(lines)
    if lines and draw(st.booleans()):
        data = data.removesuffix(lines[-1][-1:])  # a last line without its newline (or a CRLF cut to CR)
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


def _read(data: bytes) -> tuple[list[tuple[str, str]], dict[str, int]]:
    counts = new_counts()
    pairs = list(read_pairs(io.BytesIO(data), counts, 0, 1, False, 6))
    return pairs, counts


def _check_reading(data: bytes) -> None:
    pairs, counts = _read(data)
    outcomes = sum(count for key, count in counts.items() if key != "lines")
    assert counts["lines"] == outcomes == len(data.splitlines())  # one outcome a line, universal newlines
    assert counts["kept"] == len(pairs)
    for source, target in pairs:
        for text in (source, target):
            assert text and refusal(text) is None and clean_text(text) == text  # kept: a fixed point
            assert not set(text) & set(WHITESPACE) - {" "}  # one line, one column


@DEFAULT
@given(corpora())
def test_every_line_is_kept_or_counted_once(data):
    _check_reading(data)


@pytest.mark.slow
@SLOW
@given(corpora())
def test_every_line_is_kept_or_counted_once_slow(data):
    _check_reading(data)


def _check_streamed_cuts(data: bytes, pieces: int, folder) -> None:
    """The streamed preparation reads byte ranges (any cut); together they count what one reading counts."""
    path = folder / "corpus.tsv"
    path.write_bytes(data)
    counts = new_counts()
    for piece in corpus_ranges([path], None, pieces):
        with range_lines(piece) as lines:
            for _ in read_pairs(lines, counts, 0, 1, False, 6, piece.start == 0):
                pass
    assert counts == _read(data)[1]


@DEFAULT
@given(corpora(), st.integers(1, 7))
def test_a_streamed_corpus_cut_anywhere_counts_the_same(tmp_path_factory, data, pieces):
    _check_streamed_cuts(data, pieces, tmp_path_factory.mktemp("cut"))


@pytest.mark.slow
@SLOW
@given(corpora(), st.integers(1, 7))
def test_a_streamed_corpus_cut_anywhere_counts_the_same_slow(tmp_path_factory, data, pieces):
    _check_streamed_cuts(data, pieces, tmp_path_factory.mktemp("cut"))


def _check_prepared(data: bytes, folder) -> None:
    """The whole preparation pass: its counts are the reader's, or it refuses in one CorpusError line."""
    path = folder / "corpus.tsv"
    path.write_bytes(data)
    settings = {"lowercase": False, "max_words": 6, "member": None, "seed": 0, "sample_size": 5}
    columns = {"source_column": 0, "target_column": 1}
    try:
        prepared = prepare_corpus(
            [path], folder / "cache", **columns, **settings, num_validation=1, num_test=1
        )
    except CorpusError as error:  # too few pairs for a held-out pair each and a training split
        assert "\n" not in str(error) and "are too few" in str(error)
        assert len({source for source, _ in _read(data)[0]}) < 3
        return
    assert prepared.counts == _read(data)[1] and sum(prepared.pairs.values()) == prepared.counts["kept"]
    assert all(refusal(source + target) is None for source, target in prepared.texts("sample"))


@settings(DEFAULT, max_examples=20)  # a pass writes 64 part files
@given(corpora())
def test_the_preparation_pass_counts_as_the_reader(tmp_path_factory, data):
    _check_prepared(data, tmp_path_factory.mktemp("prepared"))


@pytest.mark.slow
@settings(SLOW, max_examples=200)
@given(corpora())
def test_the_preparation_pass_counts_as_the_reader_slow(tmp_path_factory, data):
    _check_prepared(data, tmp_path_factory.mktemp("prepared"))


def _strings(tensor: tf.Tensor) -> list[str]:
    return [value.decode("utf-8") for value in tensor.numpy()]


def _check_tokenizable(data: bytes, kind: str, lowercase: bool) -> None:
    """The kept texts learn a vocabulary, the tokenizer builds from it, reads each text as the rule left it
    (the in-graph normalisation changes nothing) and detokenizes every text without an unknown token back to
    the text itself."""
    counts = new_counts()
    pairs = list(read_pairs(io.BytesIO(data), counts, 0, 1, lowercase, None))
    texts = [text for pair in pairs for text in pair]
    if not texts:
        return
    text_format = TextFormat(kind, lowercase)
    tokenizer = TextTokenizer(learn_vocabulary(texts, text_format, 400), text_format)
    assert _strings(tokenizer.normalize(tf.constant(texts))) == texts
    rows = tokenizer.tokenize(tf.constant(texts)).to_list()
    for text, row in zip(texts, rows, strict=True):
        if Vocabulary.UNK not in row:
            assert tokenizer.detokenizer.texts([[Vocabulary.SOS, *row, Vocabulary.EOS]]) == [text]


@settings(DEFAULT, max_examples=50)  # each example learns a vocabulary and builds a tokenizer
@given(corpora(), st.sampled_from(["wordpiece", "characters"]), st.booleans())
def test_kept_text_round_trips_through_its_vocabulary(data, kind, lowercase):
    _check_tokenizable(data, kind, lowercase)


@pytest.mark.slow
@settings(SLOW, max_examples=500)
@given(corpora(), st.sampled_from(["wordpiece", "characters"]), st.booleans())
def test_kept_text_round_trips_through_its_vocabulary_slow(data, kind, lowercase):
    _check_tokenizable(data, kind, lowercase)


_TYPED = st.one_of(
    st.text(st.one_of(_CHARACTERS, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)), max_size=30),
    st.binary(max_size=30),
)


def _check_typed(sentence: str | bytes, lowercase: bool) -> None:
    """A typed sentence (tx-translate, the Attention tab) is cleaned as training text, or refused in one
    line (a UserError the commands print as such), never an error of another kind."""
    try:
        cleaned = apply_text_rule(sentence, lowercase)
    except RefusedText as refused:
        assert "\n" not in str(refused) and refused.reason in (CONTROL, INVALID_UTF8)
        return
    assert refusal(cleaned) is None and clean_text(cleaned, lowercase) == cleaned


@settings(DEFAULT, max_examples=200)
@given(_TYPED, st.booleans())
def test_a_typed_sentence_is_cleaned_or_refused_in_one_line(sentence, lowercase):
    _check_typed(sentence, lowercase)


@pytest.mark.slow
@settings(SLOW, max_examples=2000)
@given(_TYPED, st.booleans())
def test_a_typed_sentence_is_cleaned_or_refused_in_one_line_slow(sentence, lowercase):
    _check_typed(sentence, lowercase)
