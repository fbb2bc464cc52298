"""A sequence-to-sequence task: two vocabularies and padded id arrays for the three splits."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from tx_keras.data.vocabulary import Vocabulary

SPLITS = ("train", "validation", "test")

Sentence = list[str]
Draw = Callable[[np.random.Generator], tuple[Sentence, Sentence]]


def split_sizes(cfg: Mapping) -> dict[str, int]:
    """Read num_train/num_validation/num_test (defaults 20000/1000/1000) from a data config."""
    defaults = {"train": 20000, "validation": 1000, "test": 1000}
    sizes = {split: int(cfg.get(f"num_{split}", default)) for split, default in defaults.items()}
    for split, size in sizes.items():
        if size < 0:
            raise ValueError(f"data.num_{split}={size} must be >= 0")
    return sizes


@dataclass(frozen=True)
class Task:
    """Splits hold (source_ids, target_ids) int32 arrays right-padded with PAD.

    Source rows are `tokens EOS` (the encoder needs no start marker); target rows are `SOS tokens EOS`
    so that shifting by one gives the teacher-forced decoder input and the labels.
    """

    name: str
    source_vocab: Vocabulary
    target_vocab: Vocabulary
    splits: dict[str, tuple[np.ndarray, np.ndarray]]

    def __post_init__(self) -> None:
        if set(self.splits) != set(SPLITS):
            raise ValueError(f"task {self.name!r} splits must be exactly {SPLITS}, got {sorted(self.splits)}")

    @property
    def source_length(self) -> int:
        return self.splits["train"][0].shape[1]

    @property
    def target_length(self) -> int:
        return self.splits["train"][1].shape[1]

    def texts(self, split: str) -> list[tuple[str, str]]:
        """Decode a split back to space-joined (source, target) strings for display."""
        source, target = self.splits[split]
        return [
            (" ".join(self.source_vocab.decode(s)), " ".join(self.target_vocab.decode(t)))
            for s, t in zip(source, target, strict=True)
        ]

    def detokenize_target(self, ids) -> str:
        """Readable target text: a token ending in an apostrophe (French elision, `l'`) joins the next."""
        text = ""
        for word in self.target_vocab.decode(ids):
            text += word if not text or text.endswith("'") else f" {word}"
        return text

    @classmethod
    def sample(
        cls,
        name: str,
        source_vocab: Vocabulary,
        target_vocab: Vocabulary,
        draw: Draw,
        seed: int,
        sizes: Mapping[str, int],
        capacity: int,
        source_length: int,
        target_length: int,
    ) -> "Task":
        """Draw distinct source sentences until all splits are full, so no source occurs in two splits.

        `capacity` is the number of distinct sources `draw` can produce; asking for more fails up front
        instead of looping forever. Lengths are the widths to pad to (tokens + EOS, SOS + tokens + EOS).
        """
        total = sum(sizes[split] for split in SPLITS)
        if total > capacity:
            raise ValueError(
                f"task {name!r} can produce only {capacity} distinct sources but the splits ask for {total}"
            )
        rng = np.random.default_rng(seed)
        pairs: dict[tuple[str, ...], Sentence] = {}
        while len(pairs) < total:
            source, target = draw(rng)
            pairs.setdefault(tuple(source), target)
        ordered = list(pairs.items())
        splits = {}
        start = 0
        for split in SPLITS:
            chunk = ordered[start : start + sizes[split]]
            start += sizes[split]
            splits[split] = (
                _pad([[*source_vocab.encode(list(s)), Vocabulary.EOS] for s, _ in chunk], source_length),
                _pad(
                    [[Vocabulary.SOS, *target_vocab.encode(t), Vocabulary.EOS] for _, t in chunk],
                    target_length,
                ),
            )
        return cls(name, source_vocab, target_vocab, splits)


def _pad(rows: list[list[int]], width: int) -> np.ndarray:
    array = np.full((len(rows), width), Vocabulary.PAD, dtype=np.int32)
    for i, row in enumerate(rows):
        if len(row) > width:
            raise ValueError(f"row of {len(row)} ids does not fit the declared width {width}")
        array[i, : len(row)] = row
    return array
