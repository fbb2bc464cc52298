"""Vocabularies learned from a training split: WordPiece (tensorflow-text's learner) or characters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as wordpiece_learner

from tx_keras.data.text_format import SPACE, SUFFIX, TextFormat
from tx_keras.data.vocabulary import Vocabulary

# The learner considers the most frequent words only: on Tatoeba French (44k distinct words) this halves
# its time (75 s -> 33 s) while the rarer words still decompose into the learned pieces.
_MAX_INPUT_WORDS = 20000


def learn_vocabulary(texts: Iterable[str], text_format: TextFormat, size: int) -> Vocabulary:
    """At most `size` tokens (the four specials included) covering `texts` (already normalised).

    WordPiece counts whitespace-separated words, as the tokenizer splits them, and lets tensorflow-text's
    learner pick pieces; characters keep the most frequent ones (ties in code-point order, so the same
    texts always give the same ids).
    """
    if size <= len(Vocabulary.SPECIALS):
        raise ValueError(
            f"vocab_size={size} leaves no room for tokens beside the {len(Vocabulary.SPECIALS)} special "
            f"tokens {', '.join(Vocabulary.SPECIALS)}"
        )
    if text_format.kind == "characters":
        # A literal SPACE character is not counted as a space (the tokenizer reads it as UNK).
        counts = Counter(SPACE if c == " " else c for text in texts for c in text if c != SPACE)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return Vocabulary([character for character, _ in ranked[: size - len(Vocabulary.SPECIALS)]])
    counts = Counter(word for text in texts for word in text.split())
    if not counts:
        raise ValueError("no words to learn a vocabulary from")
    learned = wordpiece_learner.learn(
        counts,
        size,
        list(Vocabulary.SPECIALS),
        joiner=SUFFIX,
        max_unique_chars=500,
        max_input_tokens=_MAX_INPUT_WORDS,
    )
    return Vocabulary([token for token in learned if token not in Vocabulary.SPECIALS])
