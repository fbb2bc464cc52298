"""Checking what a visitor types before it reaches a model: one clear sentence, or a clear refusal.

The characters are judged by the project's one text rule (tx_keras/data/text_rule.py), the same that
decided what the model was trained on; this module adds only what a web form needs (type, size, status).
"""

from __future__ import annotations

from tx_keras.data.text_rule import RefusedText, apply_text_rule

MAX_CHARACTERS = 200  # longer input is refused; the model reads at most its max_source_length tokens anyway


class SentenceError(ValueError):
    """Input the page shows back as a message (HTTP 4xx), never a server error."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def check_sentence(text: object) -> str:
    """The sentence cleaned by the text rule; SentenceError if not text, too long, refused by the rule or
    empty once cleaned."""
    if not isinstance(text, str):
        raise SentenceError("send the sentence as a JSON string under `text`")
    if len(text) > MAX_CHARACTERS:
        raise SentenceError(f"that is {len(text)} characters; at most {MAX_CHARACTERS} are accepted", 413)
    try:
        text = apply_text_rule(text)
    except RefusedText as error:
        raise SentenceError(str(error)) from None
    if not text:
        raise SentenceError("type a sentence first")
    return text
