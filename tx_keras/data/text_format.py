"""How a real-text task's tokens map back to text: WordPiece pieces or single characters."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from tx_keras.run_folder.atomic_write import write_json

TOKENIZER_KINDS = ("wordpiece", "characters")
TOKENIZER_CHOICES = (*TOKENIZER_KINDS, "auto")  # data.tokenizer; auto: per side (unspaced_script.py)

SUFFIX = "##"  # WordPiece's mark of a piece that continues the previous one inside a word
SPACE = "▁"  # the characters tokenizer's token for a space (tokens never contain whitespace)


@dataclass(frozen=True)
class TextFormat:
    """The tokenizer kind and casing of one side of a real-text task; saved beside the vocabularies in a
    run folder (`save_formats`) so the exported model tokenizes served text exactly as training did.

    Both kinds are reversible on normalised text: WordPiece pieces are cut inside whitespace-separated
    words only (never at punctuation), so joining the words with one space and gluing `##` pieces
    restores the original spacing ("l'homme", "pop-up", "Salut !") instead of "l ' homme" (the join
    rules: detokenizer.py, whose `join` names are these kinds).
    """

    kind: str = "wordpiece"
    lowercase: bool = False

    def __post_init__(self) -> None:
        if self.kind not in TOKENIZER_KINDS:
            raise ValueError(f"tokenizer={self.kind!r}; choose one of: {', '.join(TOKENIZER_KINDS)}")


def save_formats(path: str | Path, source: TextFormat, target: TextFormat) -> None:
    """Both sides' formats in one JSON file: {"source": {...}, "target": {...}}."""
    formats = {"source": asdict(source), "target": asdict(target)}
    write_json(Path(path), formats, indent=None, sort_keys=False)


def load_formats(path: str | Path) -> tuple[TextFormat, TextFormat]:
    """(source, target) formats; a file from before per-side formats holds one format for both."""
    formats = json.loads(Path(path).read_text(encoding="utf-8"))
    if "kind" in formats:
        return TextFormat(**formats), TextFormat(**formats)
    return TextFormat(**formats["source"]), TextFormat(**formats["target"])
