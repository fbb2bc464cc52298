"""Checking what a visitor types before it reaches a model: one clear sentence, or a clear refusal."""

from __future__ import annotations

import unicodedata

MAX_CHARACTERS = 200  # longer input is refused; the model reads at most its max_source_length tokens anyway


class SentenceError(ValueError):
    """Input the page shows back as a message (HTTP 4xx), never a server error."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def check_sentence(text: object) -> str:
    """The sentence with surrounding spaces trimmed; SentenceError if empty, too long or not text."""
    if not isinstance(text, str):
        raise SentenceError("send the sentence as a JSON string under `text`")
    text = text.strip()
    if not text:
        raise SentenceError("type a sentence first")
    if len(text) > MAX_CHARACTERS:
        raise SentenceError(f"that is {len(text)} characters; at most {MAX_CHARACTERS} are accepted", 413)
    bad = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn")})
    if bad:
        raise SentenceError(f"the sentence holds control or unassigned characters ({', '.join(bad[:5])})")
    return text
