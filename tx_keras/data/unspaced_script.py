"""Which language sides are written without spaces between words, so WordPiece cannot use them.

WordPiece here splits at whitespace only (TextFormat), which is what keeps "l'homme" whole. A Chinese,
Japanese or Thai sentence has no spaces, so each sentence would be one "word": the learner would see
every sentence once, and FastWordpieceTokenizer maps a word over 100 bytes (~33 CJK characters) to UNK.
Characters are the usual unit for those scripts, and `data.tokenizer=auto` picks them per side.
"""

from __future__ import annotations

from collections.abc import Sequence

# Scripts written without spaces between words (code-point ranges); Korean uses spaces and is not here.
_UNSPACED_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2FFFF),  # CJK Extensions B-F
)
UNSPACED_SHARE = 0.3  # a side with at least this share of such characters is tokenized as characters
_SAMPLE = 20000  # texts looked at: the share settles long before


def _unspaced(character: str) -> bool:
    code = ord(character)
    return any(low <= code <= high for low, high in _UNSPACED_RANGES)


def unspaced_share(texts: Sequence[str]) -> float:
    """The share of non-space characters (of the first 20,000 texts) that belong to scripts written
    without spaces."""
    characters = [c for text in texts[:_SAMPLE] for c in text if not c.isspace()]
    return sum(map(_unspaced, characters)) / len(characters) if characters else 0.0


def tokenizer_for(texts: Sequence[str]) -> str:
    """`characters` for a side written mostly in an unspaced script, else `wordpiece`."""
    return "characters" if unspaced_share(texts) >= UNSPACED_SHARE else "wordpiece"
