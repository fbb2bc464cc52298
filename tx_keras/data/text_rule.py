"""The rule for text: what of a corpus line or a typed sentence is kept, what is cleaned, what is refused.

Every door where a user's text comes in applies this one rule: the corpus reader to each line (in memory
and streamed: parallel_corpus.read_pairs), tx-translate and the Attention tab to a typed sentence
(`apply_text_rule`). So the vocabulary learner and the tokenizers only ever see text the rule kept, and a
sentence typed at serving time is cleaned as the training text was. docs/corpora.md states the rule for
users ("What the reader keeps, cleans and refuses").

Refused (a corpus line is then skipped and counted under the reason):
- `invalid_utf8`: bytes that are not UTF-8;
- `control`: a control character (Unicode category Cc: C0, DEL, C1) other than tab, line feed and carriage
  return, which are whitespace; an unpaired surrogate (only a typed string can hold one: UTF-8 bytes
  cannot). A NUL learned into a vocabulary token stops tensorflow-text's WordPiece tokenizer from being
  built at all ("zero-length key"), and no control character is text a model should learn.

Cleaned, in exactly these steps (`clean_text`; the serving side mirrors them with TensorFlow ops in
text_tokenizer.py, so they are kept few and exact rather than "clean up whatever looks odd"):
1. Unicode NFKC: compatibility forms become their plain equivalents, notably the French typographic spaces
   before ``! ? : ;`` (U+202F, U+00A0, U+2009) become U+0020, so "Salut\u202f!" and "Salut !" are one
   sentence.
2. Remove every character of `INVISIBLE` (zero-width and bidirectional formatting marks).
3. Replace each run of `WHITESPACE` characters by one U+0020.
4. Strip leading and trailing spaces.
5. If `lowercase`, `str.lower()` (full Unicode lower-casing), last.

Kept: everything else, as cleaned. NFKC and lower-casing never produce a control character, so cleaned
text passes the rule again unchanged.
"""

from __future__ import annotations

import re
import unicodedata

from tx_keras.user_error import UserError

INVALID_UTF8 = "invalid_utf8"
CONTROL = "control"

# Invisible characters that real text carries and NFKC keeps: ZERO WIDTH SPACE, ZERO WIDTH NON-JOINER, ZERO
# WIDTH JOINER, WORD JOINER, BYTE ORDER MARK / ZERO WIDTH NO-BREAK SPACE, then the bidirectional marks,
# embeddings, overrides and isolates (LRM, RLM, ALM, U+202A-U+202E, U+2066-U+2069).
INVISIBLE = (
    "\u200b\u200c\u200d\u2060\ufeff"  # zero-width
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # bidirectional
)

# The characters that still count as whitespace after NFKC (NFKC already turns U+00A0, U+2000-U+200A, U+202F,
# U+205F and U+3000 into U+0020): exactly what `str.split()` splits on in normalised text. A mirror that
# collapses runs of these characters into one U+0020 matches step 3. (The control characters among them,
# other than tab, line feed and carriage return, are refused before cleaning.)
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\u1680\u2028\u2029"

_INVISIBLE_RUN = re.compile(f"[{INVISIBLE}]+")
_REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")  # Cc but \t \n \r; surrogates


class RefusedText(UserError):
    """A typed sentence the rule refuses, said in one line; `reason` is one of INVALID_UTF8, CONTROL."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def refusal(text: str) -> str | None:
    """Why the rule refuses `text` (CONTROL), or None when it is kept (once cleaned)."""
    return CONTROL if _REFUSED.search(text) else None


def clean_text(text: str, lowercase: bool = False) -> str:
    """Text the rule keeps, cleaned in the module's five steps."""
    if not text.isascii():  # ASCII is NFKC already and holds no invisible character: 3x faster on corpora
        text = _INVISIBLE_RUN.sub("", unicodedata.normalize("NFKC", text))
    text = " ".join(text.split())
    return text.lower() if lowercase else text


def apply_text_rule(text: str | bytes, lowercase: bool = False) -> str:
    """A typed sentence (a string, or bytes read as UTF-8) cleaned as training text was; raises RefusedText
    (a UserError: one line) when the rule refuses it. Empty after cleaning is returned as "": the caller
    knows whether that is an error."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise RefusedText(
                f"the sentence is not UTF-8 (byte 0x{text[error.start]:02x} at offset {error.start})",
                INVALID_UTF8,
            ) from None
    found = _REFUSED.search(text)
    if found:
        code = ord(found.group())
        kind = "an unpaired surrogate" if 0xD800 <= code <= 0xDFFF else "a control character"
        raise RefusedText(
            f"the sentence holds {kind}, U+{code:04X}, at position {found.start()}; "
            "remove it (only tab and line breaks are allowed, as spaces)",
            CONTROL,
        )
    return clean_text(text, lowercase)
