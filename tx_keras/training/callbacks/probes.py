"""The few fixed validation sentences the dashboard follows through training."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tx_keras.data import Task


@dataclass(frozen=True)
class Probes:
    """Source ids, teacher-forced decoder input ids and labels, plus the words for the plot axes and the
    sentences themselves (a WordPiece source reads `this motion?`, not its pieces `this m ##otion ##?`)."""

    source: np.ndarray  # (N, Ts)
    decoder_input: np.ndarray  # (N, Tt - 1): SOS + reference words
    source_tokens: list[list[str]]  # per sentence: the real source tokens (EOS included)
    target_tokens: list[list[str]]  # per sentence: the decoder input tokens (SOS, reference words)
    sources: list[str]  # detokenized source sentences
    references: list[str]  # detokenized reference translations

    @classmethod
    def from_task(cls, task: Task, count: int, split: str = "validation") -> Probes:
        source, target = task.splits[split]
        source, target = source[:count], target[:count]
        decoder_input = target[:, :-1]

        def words(vocab, row: np.ndarray, keep_eos: bool) -> list[str]:
            return [vocab.tokens[i] for i in row if i != 0 and (keep_eos or i != vocab.EOS)]

        return cls(
            source=source,
            decoder_input=decoder_input,
            source_tokens=[words(task.source_vocab, row, keep_eos=True) for row in source],
            target_tokens=[words(task.target_vocab, row, keep_eos=False) for row in decoder_input],
            sources=task.detokenize_sources(source),
            references=task.detokenize_targets(target),
        )

    def __len__(self) -> int:
        return len(self.source)
