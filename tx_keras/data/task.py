"""A sequence-to-sequence task: two vocabularies and padded id arrays for the three splits."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from tx_keras.data.plain_detokenizer import detokenizer
from tx_keras.data.text_format import TextFormat
from tx_keras.data.vocabulary import Vocabulary

if TYPE_CHECKING:  # imports TensorFlow: only a streamed task builds one
    from tx_keras.data.batching.train_stream import TrainStream

SPLITS = ("train", "validation", "test")

Sentence = list[str]
Draw = Callable[[np.random.Generator], tuple[Sentence, Sentence]]


@dataclass(frozen=True)
class Task:
    """Splits hold (source_ids, target_ids) int32 arrays right-padded with PAD.

    Source rows are `tokens EOS` (the encoder needs no start marker); target rows are `SOS tokens EOS`
    so that shifting by one gives the teacher-forced decoder input and the labels.

    Real-text tasks also carry each side's `TextFormat` (how tokens join back into text), the normalised
    sentence pairs of each split in `pair_texts` (BLEU's references: the text itself, not its tokens,
    which may hold UNK) and a `report` of how the data was read (skipped lines, lengths).

    A streamed corpus (`data.stream=true`) carries its training split as a `train_stream` read from disk each
    epoch; its `splits["train"]` then holds only a sample's first rows (for building the model).
    """

    name: str
    source_vocab: Vocabulary
    target_vocab: Vocabulary
    splits: dict[str, tuple[np.ndarray, np.ndarray]]
    source_format: TextFormat | None = None
    target_format: TextFormat | None = None
    pair_texts: dict[str, list[tuple[str, str]]] | None = None
    report: dict[str, Any] = field(default_factory=dict)
    train_stream: "TrainStream | None" = None

    def __post_init__(self) -> None:
        if set(self.splits) != set(SPLITS):
            raise ValueError(f"task {self.name!r} splits must be exactly {SPLITS}, got {sorted(self.splits)}")

    @property
    def is_text(self) -> bool:
        """A real-text task: scored with BLEU/chrF and exported with its tokenizers."""
        return self.target_format is not None

    @property
    def source_length(self) -> int:
        return self.splits["train"][0].shape[1]

    @property
    def target_length(self) -> int:
        return self.splits["train"][1].shape[1]

    def texts(self, split: str) -> list[tuple[str, str]]:
        """A split's (source, target) sentences: the corpus text itself, or the decoded ids joined by
        spaces for the synthetic tasks."""
        if self.pair_texts is not None:
            return list(self.pair_texts[split])
        source, target = self.splits[split]
        return [
            (" ".join(self.source_vocab.decode(s)), " ".join(self.target_vocab.decode(t)))
            for s, t in zip(source, target, strict=True)
        ]

    @cached_property
    def _detokenizers(self) -> dict:
        """Each side's Detokenizer (plain_detokenizer.py without TensorFlow): real text joins by its
        TextFormat, the synthetic tasks join words."""
        sides = {
            "source": (self.source_vocab, self.source_format),
            "target": (self.target_vocab, self.target_format),
        }
        return {
            side: detokenizer(vocab.tokens, "words" if text_format is None else text_format.kind)
            for side, (vocab, text_format) in sides.items()
        }

    def detokenize_sources(self, rows) -> list[str]:
        """(B, T) source ids -> B readable texts (detokenizer.py: the text the exported model serves)."""
        return self._detokenizers["source"].texts(rows)

    def detokenize_targets(self, rows) -> list[str]:
        """(B, T) target ids -> B readable texts: what BLEU / chrF score."""
        return self._detokenizers["target"].texts(rows)

    def detokenize_source(self, ids) -> str:
        """One row's readable source text."""
        return self.detokenize_sources([ids])[0]

    def detokenize_target(self, ids) -> str:
        """One row's readable target text."""
        return self.detokenize_targets([ids])[0]

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
                pad_rows([[*source_vocab.encode(list(s)), Vocabulary.EOS] for s, _ in chunk], source_length),
                pad_rows(
                    [[Vocabulary.SOS, *target_vocab.encode(t), Vocabulary.EOS] for _, t in chunk],
                    target_length,
                ),
            )
        return cls(name, source_vocab, target_vocab, splits)


def pad_rows(rows: list[list[int]], width: int) -> np.ndarray:
    array = np.full((len(rows), width), Vocabulary.PAD, dtype=np.int32)
    for i, row in enumerate(rows):
        if len(row) > width:
            raise ValueError(f"row of {len(row)} ids does not fit the declared width {width}")
        array[i, : len(row)] = row
    return array
