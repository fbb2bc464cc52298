"""The vocabularies and tokenizers of a parallel corpus, set up one way for every corpus path (read in
memory: parallel_text.py; streamed: streamed_parallel_text.py) from the training texts the reader kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tx_keras.data.task_config import ParallelTextConfig
from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.unspaced_script import tokenizer_for
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.data.vocabulary_cache import cached_tokenizers


@dataclass(frozen=True)
class CorpusTokenizers:
    """Each side's format, vocabulary and tokenizer (one shared vocabulary: the same object on both)."""

    source_format: TextFormat
    target_format: TextFormat
    source_vocab: Vocabulary
    target_vocab: Vocabulary
    source: TextTokenizer
    target: TextTokenizer

    def report(self) -> dict[str, dict[str, object]]:
        """The task report's tokenizer and vocabulary entries."""
        return {
            "tokenizers": {"source": self.source_format.kind, "target": self.target_format.kind},
            "vocabulary": {"source": len(self.source_vocab), "target": len(self.target_vocab)},
        }


def corpus_tokenizers(
    config: ParallelTextConfig, sources: list[str], targets: list[str], cache: Path
) -> CorpusTokenizers:
    """The tokenizers `config` asks for (data.tokenizer, data.shared_vocabulary, data.vocab_size,
    data.lowercase), learned from the training `sources` and `targets` or found in `cache`."""
    shared, size = config.shared_vocabulary, config.vocab_size
    source_kind, target_kind = tokenizer_kinds(config.tokenizer, shared, sources, targets)
    source_format = TextFormat(source_kind, config.lowercase)
    target_format = TextFormat(target_kind, config.lowercase)
    if shared:
        ((vocab, tokenizer),) = cached_tokenizers([(sources + targets, source_format)], size, cache)
        return CorpusTokenizers(source_format, target_format, vocab, vocab, tokenizer, tokenizer)
    (source_vocab, source), (target_vocab, target) = cached_tokenizers(
        [(sources, source_format), (targets, target_format)], size, cache
    )
    return CorpusTokenizers(source_format, target_format, source_vocab, target_vocab, source, target)


def tokenizer_kinds(choice: str, shared: bool, sources: list[str], targets: list[str]) -> tuple[str, str]:
    """(source, target) tokenizer kinds: `choice` for both, or with `auto` characters for a side written
    in an unspaced script and WordPiece otherwise (characters for both when they share a vocabulary
    and either needs them)."""
    if choice != "auto":
        return choice, choice
    kinds = tokenizer_for(sources), tokenizer_for(targets)
    if shared and "characters" in kinds:
        return "characters", "characters"
    return kinds
