"""Seeded synthetic English->French grammar, after the lecture's "jane visits africa in september".

Word-by-word substitution cannot solve it, which is the point: colour adjectives move behind the noun,
articles and adjectives agree with a noun's gender and number, verbs agree with a (possibly two-name)
subject, country articles depend on gender and elide before vowels (`l' afrique`), and "never" becomes
the discontinuous `ne ... jamais` around the verb while other adverbs move behind it.
"""

from dataclasses import dataclass
from itertools import product

import numpy as np

from tx_keras.data.task import Sentence, Task
from tx_keras.data.task_config import TranslationConfig
from tx_keras.data.vocabulary import Vocabulary

_VOWELS = "aeiouéèê"


@dataclass(frozen=True)
class _Phrase:
    """A subject or object: aligned English/French tokens plus what agreement elsewhere needs."""

    english: tuple[str, ...]
    french: tuple[str, ...]
    plural: bool = False
    names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Noun:
    english: str
    english_plural: str
    french: str
    french_plural: str
    feminine: bool


@dataclass(frozen=True)
class _Colour:
    """French colour adjectives follow the noun and inflect: forms indexed by (feminine, plural)."""

    english: str
    masculine: str
    feminine: str
    masculine_plural: str
    feminine_plural: str

    def agree(self, feminine: bool, plural: bool) -> str:
        if plural:
            return self.feminine_plural if feminine else self.masculine_plural
        return self.feminine if feminine else self.masculine


@dataclass(frozen=True)
class _Adverb:
    """English puts it before the verb, French after; `negates` adds `ne`/`n'` before the verb."""

    english: str
    french: str
    negates: bool = False


@dataclass(frozen=True)
class _Verb:
    english: str
    english_plural: str
    french: str
    french_plural: str
    objects: tuple[tuple[_Phrase, ...], ...]  # object classes, sampled class-first


@dataclass(frozen=True)
class _Clause:
    """subject [adverb] verb object [with NAME] [in MONTH]."""

    subject: _Phrase
    adverb: _Adverb | None
    verb: _Verb
    obj: _Phrase
    companion: str | None
    month: tuple[str, str] | None

    def english(self) -> Sentence:
        verb = self.verb.english_plural if self.subject.plural else self.verb.english
        return [
            *self.subject.english,
            *([self.adverb.english] if self.adverb else []),
            verb,
            *self.obj.english,
            *(["with", self.companion] if self.companion else []),
            *(["in", self.month[0]] if self.month else []),
        ]

    def french(self) -> Sentence:
        verb = self.verb.french_plural if self.subject.plural else self.verb.french
        negation = [_negation(verb)] if self.adverb and self.adverb.negates else []
        return [
            *self.subject.french,
            *negation,
            verb,
            *([self.adverb.french] if self.adverb else []),
            *self.obj.french,
            *(["avec", self.companion] if self.companion else []),
            *(["en", self.month[1]] if self.month else []),
        ]


def _negation(french_verb: str) -> str:
    return "n'" if french_verb[0] in _VOWELS else "ne"


def _article(french_noun: str, feminine: bool, plural: bool) -> str:
    if plural:
        return "les"
    if french_noun[0] in _VOWELS:
        return "l'"
    return "la" if feminine else "le"


NAMES = ("jane", "paul", "marie", "tom")

ANIMALS = (
    _Noun("cat", "cats", "chat", "chats", False),
    _Noun("dog", "dogs", "chien", "chiens", False),
    _Noun("bird", "birds", "oiseau", "oiseaux", False),
    _Noun("horse", "horses", "cheval", "chevaux", False),
    _Noun("cow", "cows", "vache", "vaches", True),
)
GOODS = (
    _Noun("car", "cars", "voiture", "voitures", True),
    _Noun("house", "houses", "maison", "maisons", True),
    _Noun("book", "books", "livre", "livres", False),
    _Noun("apple", "apples", "pomme", "pommes", True),
)
SIGHTS = (
    _Noun("tree", "trees", "arbre", "arbres", False),
    _Noun("school", "schools", "école", "écoles", True),
)
COLOURS = (
    _Colour("red", "rouge", "rouge", "rouges", "rouges"),
    _Colour("green", "vert", "verte", "verts", "vertes"),
    _Colour("blue", "bleu", "bleue", "bleus", "bleues"),
    _Colour("black", "noir", "noire", "noirs", "noires"),
    _Colour("white", "blanc", "blanche", "blancs", "blanches"),
    _Colour("yellow", "jaune", "jaune", "jaunes", "jaunes"),
    _Colour("grey", "gris", "grise", "gris", "grises"),
)
# (english, french, feminine)
COUNTRIES = (
    ("africa", "afrique", True),
    ("france", "france", True),
    ("japan", "japon", False),
    ("canada", "canada", False),
    ("italy", "italie", True),
    ("spain", "espagne", True),
    ("china", "chine", True),
    ("brazil", "brésil", False),
)
MONTHS = (
    ("january", "janvier"),
    ("february", "février"),
    ("march", "mars"),
    ("april", "avril"),
    ("may", "mai"),
    ("june", "juin"),
    ("july", "juillet"),
    ("august", "août"),
    ("september", "septembre"),
    ("october", "octobre"),
    ("november", "novembre"),
    ("december", "décembre"),
)
ADVERBS = (
    _Adverb("often", "souvent"),
    _Adverb("sometimes", "parfois"),
    _Adverb("always", "toujours"),
    _Adverb("never", "jamais", negates=True),
)


def _noun_phrases(nouns: tuple[_Noun, ...]) -> tuple[_Phrase, ...]:
    """Every `the [colour] noun(s)` with its agreeing French article, noun and trailing adjective."""
    phrases = []
    for noun, plural, colour in product(nouns, (False, True), (None, *COLOURS)):
        french_noun = noun.french_plural if plural else noun.french
        phrases.append(
            _Phrase(
                english=(
                    "the",
                    *([colour.english] if colour else []),
                    noun.english_plural if plural else noun.english,
                ),
                french=(
                    _article(french_noun, noun.feminine, plural),
                    french_noun,
                    *([colour.agree(noun.feminine, plural)] if colour else []),
                ),
                plural=plural,
            )
        )
    return tuple(phrases)


_COUNTRY_PHRASES = tuple(
    _Phrase((english,), (_article(french, feminine, False), french))
    for english, french, feminine in COUNTRIES
)
_ANIMAL_PHRASES = _noun_phrases(ANIMALS)
_GOODS_PHRASES = _noun_phrases(GOODS)
_SIGHT_PHRASES = _noun_phrases(SIGHTS)

# Subject classes, sampled class-first so single names, name pairs and animals are equally common.
_SUBJECTS = (
    tuple(_Phrase((name,), (name,), names=frozenset({name})) for name in NAMES),
    tuple(
        _Phrase((a, "and", b), (a, "et", b), plural=True, names=frozenset({a, b}))
        for a, b in product(NAMES, NAMES)
        if a != b
    ),
    _ANIMAL_PHRASES,
)
VERBS = (
    _Verb("visits", "visit", "visite", "visitent", (_COUNTRY_PHRASES,)),
    _Verb("sees", "see", "voit", "voient", (_ANIMAL_PHRASES, _GOODS_PHRASES, _SIGHT_PHRASES)),
    _Verb(
        "likes",
        "like",
        "aime",
        "aiment",
        (_COUNTRY_PHRASES, _ANIMAL_PHRASES, _GOODS_PHRASES, _SIGHT_PHRASES),
    ),
    _Verb("buys", "buy", "achète", "achètent", (_GOODS_PHRASES,)),
)


def _pick(rng: np.random.Generator, options):
    return options[rng.integers(len(options))]


def _maybe(rng: np.random.Generator, options):
    """Optional slots are present half the time so sentence lengths spread evenly."""
    return _pick(rng, options) if rng.random() < 0.5 else None


def _draw_clause(rng: np.random.Generator) -> _Clause:
    subject = _pick(rng, _pick(rng, _SUBJECTS))
    adverb = _maybe(rng, ADVERBS)
    verb = _pick(rng, VERBS)
    obj = _pick(rng, _pick(rng, verb.objects))
    companion = _maybe(rng, [name for name in NAMES if name not in subject.names])
    month = _maybe(rng, MONTHS)
    return _Clause(subject, adverb, verb, obj, companion, month)


def _draw(rng: np.random.Generator) -> tuple[Sentence, Sentence]:
    clause = _draw_clause(rng)
    return clause.english(), clause.french()


def _all_subjects() -> tuple[_Phrase, ...]:
    return tuple(subject for subjects in _SUBJECTS for subject in subjects)


def _all_objects() -> tuple[_Phrase, ...]:
    return tuple(obj for verb in VERBS for objects in verb.objects for obj in objects)


def num_sentences() -> int:
    """How many distinct English sentences the grammar generates (each derivation reads differently)."""
    with_options = sum(1 + sum(name not in s.names for name in NAMES) for s in _all_subjects())
    return with_options * (1 + len(ADVERBS)) * len(_all_objects()) * (1 + len(MONTHS))


def _strip(words: tuple[str, ...], prefix: tuple[str, ...]) -> tuple[str, ...] | None:
    return words[len(prefix) :] if words[: len(prefix)] == prefix else None


def translate(english: str) -> str:
    """Reference translation of a sentence the grammar generates; ValueError for anything else."""
    words = tuple(english.split())
    for subject, adverb, verb in product(_all_subjects(), (None, *ADVERBS), VERBS):
        verb_form = verb.english_plural if subject.plural else verb.english
        rest = _strip(words, (*subject.english, *([adverb.english] if adverb else []), verb_form))
        if rest is None:
            continue
        companions = (None, *(name for name in NAMES if name not in subject.names))
        for obj in (obj for objects in verb.objects for obj in objects):
            if _strip(rest, obj.english) is None:
                continue
            for companion, month in product(companions, (None, *MONTHS)):
                clause = _Clause(subject, adverb, verb, obj, companion, month)
                if clause.english() == list(words):
                    return " ".join(clause.french())
    raise ValueError(f"{english!r} is not a sentence of the translation grammar")


def _vocabularies() -> tuple[Vocabulary, Vocabulary]:
    """Every token the grammar can emit, sorted, so the ids never depend on the sample."""
    english = {"with", "in", *NAMES, *(month for month, _ in MONTHS), *(a.english for a in ADVERBS)}
    french = {"avec", "en", *NAMES, *(mois for _, mois in MONTHS), *(a.french for a in ADVERBS)}
    for phrase in (*_all_subjects(), *_all_objects()):
        english.update(phrase.english)
        french.update(phrase.french)
    for verb in VERBS:
        english.update((verb.english, verb.english_plural))
        french.update((verb.french, verb.french_plural))
        french.update((_negation(verb.french), _negation(verb.french_plural)))
    return Vocabulary(sorted(english)), Vocabulary(sorted(french))


def _padded_lengths() -> tuple[int, int]:
    """Widths from the longest choice in every slot: (tokens + EOS, SOS + tokens + EOS)."""
    subject_en = max(len(s.english) for s in _all_subjects())
    subject_fr = max(len(s.french) for s in _all_subjects())
    object_en = max(len(o.english) for o in _all_objects())
    object_fr = max(len(o.french) for o in _all_objects())
    english = subject_en + 1 + 1 + object_en + 2 + 2  # adverb, verb, with NAME, in MONTH
    french = subject_fr + 3 + object_fr + 2 + 2  # ne VERB jamais, avec NAME, en MOIS
    return english + 1, french + 2


def build_translation(config: TranslationConfig) -> Task:
    """The default task: the seed and split sizes of `config` (task_config.py)."""
    source_vocab, target_vocab = _vocabularies()
    source_length, target_length = _padded_lengths()
    return Task.sample(
        name="translation",
        source_vocab=source_vocab,
        target_vocab=target_vocab,
        draw=_draw,
        seed=config.seed,
        sizes=config.split_sizes,
        capacity=num_sentences(),
        source_length=source_length,
        target_length=target_length,
    )
