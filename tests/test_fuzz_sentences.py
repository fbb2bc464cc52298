"""Property-based tests of the typed-sentence door of tx-translate (issue 65), with Hypothesis: any string
(control characters, unpaired surrogates, invisible marks, huge lengths) gets a translation, or one line on
stderr and exit code 2 when the text rule (data/text_rule.py) refuses it; never a traceback.

tx-translate's main runs in this process against the tiny run's export (tests/conftest.py `tiny_run`),
its SavedModel loaded once for the module; one fresh process checks a sample of the inputs end to end.
The default run keeps a hundred-odd examples; `pytest -m slow` runs ten times as many.
"""

from __future__ import annotations

import functools
import io
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ahead import ahead_fixture, needs
from tests.conftest import main_here
from tx_keras.cli import translate
from tx_keras.data.text_rule import refusal
from tx_keras.export import saved_model_loader

settings.register_profile(
    "sentences-default",
    max_examples=100,
    deadline=None,
    database=None,  # each failure found becomes a fixed case instead
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile("sentences-slow", settings.get_profile("sentences-default"), max_examples=1000)
DEFAULT, SLOW = settings.get_profile("sentences-default"), settings.get_profile("sentences-slow")

# Characters of a bad paste beside plain words: controls, line breaks, invisible and bidirectional marks,
# compatibility forms, unpaired surrogates, astral characters; and any character at all.
_ODD = "\x00\x07\x1b\x7f\x85\x9f\t\r\n \u00a0\u202f\u200b\u200d\u202e\ufeff\ufb01\u0130\ud800\udcff\U0001f600"
_CHARACTERS = st.one_of(
    st.sampled_from("abc xyz.!?'"),
    st.sampled_from(_ODD),
    st.characters(blacklist_categories=()),  # surrogates included
)
_WORDS = st.sampled_from(["jane ", "visits ", "africa ", "<eos> "])
_SHORT = st.lists(st.one_of(_WORDS, st.text(_CHARACTERS, max_size=5)), max_size=8).map("".join)
SENTENCES = st.one_of(_SHORT, st.tuples(_SHORT, st.integers(100, 20000)).map(lambda pair: pair[0] * pair[1]))


@pytest.fixture(scope="module")
def export(tiny_run):
    """The tiny run's export, with tx-translate's SavedModel loading done once for the module."""
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            saved_model_loader, "load_saved_model", functools.cache(saved_model_loader.load_saved_model)
        )
        yield run_dir


def _translate(capsys, *args: str) -> tuple[int, str, str]:
    """tx-translate's main in this process: (exit code, stdout, stderr)."""
    result = main_here(translate.main, capsys, *args)
    return result.returncode, result.stdout, result.stderr


def _check(export, capsys, sentence: str) -> None:
    code, out, err = _translate(capsys, str(export), "--", sentence)  # after --: "-:" is a sentence too
    if refusal(sentence):
        assert code == 2 and out == "", (sentence, code, err)
        assert err.count("\n") == 1 and err.startswith("tx-translate: error: sentence 1: the sentence holds ")
    else:
        assert code == 0 and err == "", (sentence, err)
        assert len(out.splitlines()) == 1, out


@DEFAULT
@given(sentence=SENTENCES)
def test_any_sentence_is_translated_or_refused_in_one_line(export, capsys, recorded_pools, sentence):
    _check(export, capsys, sentence)


@pytest.mark.slow
@SLOW
@given(sentence=SENTENCES)
def test_any_sentence_is_translated_or_refused_in_one_line_slow(export, capsys, recorded_pools, sentence):
    _check(export, capsys, sentence)


def test_a_sentence_is_cleaned_as_training_text_was(export, capsys, recorded_pools):
    """Invisible marks, typographic spaces and NFKC forms do not change the translation."""
    plain = _translate(capsys, str(export), "jane visits africa")
    marked = _translate(capsys, str(export), " jane\u200b\u00a0visits\u202e  africa\r\n")
    assert plain[0] == 0 and marked == plain


def test_stdin_lines_are_read_as_bytes_and_refused_by_line(export, capsys, recorded_pools, monkeypatch):
    """Invalid UTF-8 on stdin is one line naming the line, not a UnicodeDecodeError."""
    stdin = io.TextIOWrapper(io.BytesIO(b"jane visits africa\n\nbad \xff byte\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = _translate(capsys, str(export))
    assert code == 2 and out == ""
    assert err == "tx-translate: error: line 3 of stdin: the sentence is not UTF-8 (byte 0xff at offset 4)\n"


# What the property found, as Hypothesis shrank it (issue 65's closing note lists them): each was a
# traceback from tf.constant (UnicodeEncodeError) or a control character passed on to the model.
@pytest.mark.parametrize(
    ("sentence", "line"),
    [
        ("\ud800", "sentence 1: the sentence holds an unpaired surrogate, U+D800, at position 0"),
        ("\x00", "sentence 1: the sentence holds a control character, U+0000, at position 0"),
    ],
)
def test_found_by_fuzzing_each_is_one_line(export, capsys, sentence, line):
    code, out, err = _translate(capsys, str(export), sentence)
    assert code == 2 and out == "" and err.startswith(f"tx-translate: error: {line}") and err.count("\n") == 1


def test_found_by_fuzzing_a_sentence_that_begins_with_a_dash(export, capsys, recorded_pools):
    """`-:` was argparse's usage and error (two lines); now one line saying where such a sentence goes,
    and after -- it is translated like any other."""
    code, out, err = _translate(capsys, str(export), "-:")
    assert code == 2 and out == "" and err.count("\n") == 1
    hint = "(a sentence that begins with '-' goes after --: tx-translate PATH -- SENTENCE)"
    assert err == f"tx-translate: error: unrecognized arguments: -: {hint}\n"
    code, out, err = _translate(capsys, str(export), "--", "-:")
    assert code == 0 and err == "" and len(out.splitlines()) == 1


FRESH_CASES = [  # (sentences, stdin, exit code): refused ones and a long accepted one
    (["jane visits", "a\x1bb"], None, 2),
    ([], b"ok\n\xc3\x28\n", 2),  # invalid UTF-8 on stdin
    (["\u202ejane\u200b " * 3000, ""], None, 0),
]


@ahead_fixture
def fresh_translations(folder: Path) -> list[subprocess.CompletedProcess]:
    """tx-translate as a user runs it, on the tiny run, once per case of FRESH_CASES."""
    command = [sys.executable, "-m", "tx_keras.cli.translate", str(needs("tiny_run")[1])]
    return [
        subprocess.run([*command, *sentences], input=stdin, capture_output=True, cwd=folder, timeout=300)
        for sentences, stdin, _ in FRESH_CASES
    ]


def test_a_fresh_process_prints_no_traceback_for_sampled_sentences(fresh_translations):
    """Generated inputs in a fresh process: refused in one line, or translated, never a traceback."""
    for (_, _, code), ran in zip(FRESH_CASES, fresh_translations, strict=True):
        err = ran.stderr.decode()
        assert ran.returncode == code and "Traceback" not in err, err[-2000:]
        if code:
            assert len(err.splitlines()) == 1 and err.startswith("tx-translate: error: "), err
        else:
            assert len(ran.stdout.decode().splitlines()) == 2
