"""The one text normalisation applied to corpus sentences at training time and mirrored at serving time.

Training text and the text a served model receives must be normalised identically, or the tokenizer sees
characters it never learned. The serving side reimplements these steps with TensorFlow string ops, so they
are kept few, exact and documented rather than "clean up whatever looks odd".
"""

import re
import unicodedata

# Invisible characters that Tatoeba-style text carries (ZERO WIDTH SPACE, ZERO WIDTH NON-JOINER, ZERO WIDTH
# JOINER, WORD JOINER, BYTE ORDER MARK / ZERO WIDTH NO-BREAK SPACE); NFKC keeps them, so they are removed.
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"

# The characters that still count as whitespace after NFKC (NFKC already turns U+00A0, U+2000-U+200A, U+202F,
# U+205F and U+3000 into U+0020): exactly what `str.split()` splits on in normalised text. A mirror that
# collapses runs of these characters into one U+0020 matches step 3 below.
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\u1680\u2028\u2029"

_ZERO_WIDTH_RUN = re.compile(f"[{ZERO_WIDTH}]+")


def normalize_text(text: str, lowercase: bool = False) -> str:
    """Normalise one sentence, in exactly these steps:

    1. Unicode NFKC (`unicodedata.normalize("NFKC", text)`): compatibility forms become their plain
       equivalents, notably the French typographic spaces before ``! ? : ;`` (U+202F, U+00A0, U+2009)
       become U+0020, so "Salut\u202f!" and "Salut !" are the same sentence.
    2. Remove every character of `ZERO_WIDTH`.
    3. Replace each run of `WHITESPACE` characters by one U+0020.
    4. Strip leading and trailing spaces.
    5. If `lowercase`, `str.lower()` (full Unicode lower-casing), last.
    """
    if not text.isascii():  # ASCII is NFKC already and holds no zero-width character: 3x faster on corpora
        text = _ZERO_WIDTH_RUN.sub("", unicodedata.normalize("NFKC", text))
    text = " ".join(text.split())
    return text.lower() if lowercase else text
