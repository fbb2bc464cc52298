"""The test translations as a TSV in the run folder: BLEU and chrF are one number each, a user judges
a model (and finds what costs points) by reading its sentences next to the references."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tx_keras.run_folder.atomic_write import write_text

HEADER = ("source", "reference", "hypothesis")


def write_translations(
    path: Path, sources: Sequence[str], references: Sequence[str], hypotheses: Sequence[str]
) -> None:
    """One line per sentence, tab-separated, with a header; the texts are normalized corpus lines and
    decoder output, which hold no tabs or newlines."""
    rows = zip(sources, references, hypotheses, strict=True)
    write_text(path, "".join("\t".join(row) + "\n" for row in (HEADER, *rows)))
