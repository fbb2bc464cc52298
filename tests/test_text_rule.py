"""normalize_text: the exact steps the serving side mirrors (NFKC, zero-width removal, space collapse)."""

import sys
import unicodedata

import pytest

from tx_keras.data.text_normalization import WHITESPACE, ZERO_WIDTH, normalize_text


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
def test_normalize_text(text, expected):
    assert normalize_text(text) == expected
    assert normalize_text(expected) == expected


def test_every_zero_width_character_is_removed():
    assert ZERO_WIDTH == "\u200b\u200c\u200d\u2060\ufeff"
    for character in ZERO_WIDTH:
        assert normalize_text(f"a{character}b") == "ab"


def test_lowercase_is_optional_and_last():
    assert normalize_text("\u00c7a VA\u202f?") == "\u00c7a VA ?"
    assert normalize_text("\u00c7a VA\u202f?", lowercase=True) == "\u00e7a va ?"


def test_whitespace_constant_is_exactly_what_is_left_to_collapse_after_nfkc():
    """The serving mirror collapses runs of WHITESPACE; that must match str.split() on NFKC text."""
    left = {
        chr(code)
        for code in range(sys.maxunicode + 1)
        if chr(code).isspace() and unicodedata.normalize("NFKC", chr(code)) == chr(code)
    }
    assert left == set(WHITESPACE)
    assert normalize_text(f"a{WHITESPACE}b") == "a b"
