"""The text rule (data/text_rule.py): what it cleans (NFKC, invisible characters removed, space collapse: the
exact steps the serving side mirrors), what it refuses (control characters, unpaired surrogates, bytes that
are not UTF-8) and that a typed sentence gets the same rule in one call."""

import sys
import unicodedata

import pytest

from tx_keras.data.text_rule import (
    CONTROL,
    INVALID_UTF8,
    INVISIBLE,
    WHITESPACE,
    RefusedText,
    apply_text_rule,
    clean_text,
    refusal,
)
from tx_keras.user_error import UserError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Salut\u202f!", "Salut !"),  # NARROW NO-BREAK SPACE, as in the Tatoeba French files
        ("Quoi\u00a0?", "Quoi ?"),  # NO-BREAK SPACE
        ("Attention\u2009: chien\u2009; oui", "Attention : chien ; oui"),  # THIN SPACE
        ("Salut !", "Salut !"),
        ("Bon\u200bjour", "Bonjour"),
        ("a \u200b b", "a b"),  # removal first, so the two spaces it leaves collapse
        ("\ufeffHello", "Hello"),
        ("  a\t\tb \n c\r\n", "a b c"),
        ("\u00a0\u202f", ""),
        ("\ufb01n\u2026", "fin..."),  # compatibility forms: the "fi" ligature, the ellipsis
        ("e\u0301t\u00e9", "\u00e9t\u00e9"),  # combining accent composed, as NFC would
        ("J\u2019ai", "J\u2019ai"),  # the typographic apostrophe is not a compatibility form: kept
    ],
)
def test_clean_text(text, expected):
    assert clean_text(text) == expected
    assert clean_text(expected) == expected


def test_every_invisible_character_is_removed():
    zero_width = "\u200b\u200c\u200d\u2060\ufeff"
    bidirectional = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert INVISIBLE == zero_width + bidirectional
    for character in INVISIBLE:
        assert clean_text(f"a{character}b") == "ab"
    assert clean_text("\u05e9\u05dc\u05d5\u05dd\u200f!") == "\u05e9\u05dc\u05d5\u05dd!"  # Hebrew, then an RLM


def test_lowercase_is_optional_and_last():
    assert clean_text("\u00c7a VA\u202f?") == "\u00c7a VA ?"
    assert clean_text("\u00c7a VA\u202f?", lowercase=True) == "\u00e7a va ?"


def test_whitespace_constant_is_exactly_what_is_left_to_collapse_after_nfkc():
    """The serving mirror collapses runs of WHITESPACE; that must match str.split() on NFKC text."""
    left = {
        chr(code)
        for code in range(sys.maxunicode + 1)
        if chr(code).isspace() and unicodedata.normalize("NFKC", chr(code)) == chr(code)
    }
    assert left == set(WHITESPACE)
    assert clean_text(f"a{WHITESPACE}b") == "a b"


@pytest.mark.parametrize("code", [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
def test_every_control_character_but_tab_and_line_breaks_is_refused(code):
    assert refusal(f"bad{chr(code)}line") == CONTROL
    with pytest.raises(RefusedText) as raised:
        apply_text_rule(f"bad{chr(code)}line")
    assert raised.value.reason == CONTROL and f"U+{code:04X}" in str(raised.value)
    assert isinstance(raised.value, UserError) and "\n" not in str(raised.value)


def test_tab_and_line_breaks_are_whitespace_in_a_typed_sentence():
    assert refusal("a\tb\r\nc\nd\re") is None
    assert apply_text_rule(" a\tb\r\nc\nd\re ") == "a b c d e"


def test_a_typed_sentence_is_cleaned_as_training_text_was():
    assert apply_text_rule("Salut\u202f! \u200bÇa VA\u00a0?", lowercase=True) == "salut ! ça va ?"
    assert apply_text_rule(b"caf\xc3\xa9") == "café"
    assert apply_text_rule("   ") == ""  # empty: the caller decides


def test_bytes_that_are_not_utf8_and_unpaired_surrogates_are_refused():
    with pytest.raises(RefusedText) as raised:
        apply_text_rule(b"caf\xe9 au lait")
    assert raised.value.reason == INVALID_UTF8 and "offset 3" in str(raised.value)
    with pytest.raises(RefusedText) as raised:
        apply_text_rule("half \ud83d of an emoji")  # what a JSON body's "\\ud83d" decodes to
    assert raised.value.reason == CONTROL and "unpaired surrogate, U+D83D, at position 5" in str(raised.value)


def test_cleaned_text_passes_the_rule_unchanged():
    for text in ["Salut\u202f!", "\ufb01n\u2026", "A\u200dB", "İstanbul"]:
        for lowercase in (False, True):
            cleaned = clean_text(text, lowercase)
            assert refusal(cleaned) is None and clean_text(cleaned, lowercase) == cleaned
