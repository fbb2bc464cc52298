"""How many lines of a corpus were kept, and why each other line was skipped: one count per reason, reported
in one line, the same for a corpus read in memory and a streamed one (both read through
parallel_corpus.read_pairs).

Real corpora carry a few broken lines (a missing tab, an empty side, bytes that are not UTF-8, a control
character); one of them must not stop a run, but silently dropping them would hide a wrong column choice or
a damaged file. So every line read is counted under exactly one outcome, and the outcomes add up to `lines`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tx_keras.data.text_rule import CONTROL, INVALID_UTF8

# Why a line is skipped, besides the text rule's refusals (text_rule.py): no visible text; fewer
# tab-separated columns than the columns asked for; a side empty once cleaned; a side over max_words words.
BLANK, MALFORMED, EMPTY, OVERLONG = "blank", "malformed", "empty", "overlong"
SKIPPED = (MALFORMED, INVALID_UTF8, CONTROL, EMPTY, OVERLONG, BLANK)
_SAID = {
    MALFORMED: "malformed",
    INVALID_UTF8: "invalid UTF-8",
    CONTROL: "with control characters",
    EMPTY: "empty",
    OVERLONG: "overlong",
    BLANK: "blank",
}


def new_counts() -> dict[str, int]:
    """Line counts by outcome, all zero: `lines` (all lines read) = `kept` + one count per SKIPPED reason."""
    return dict.fromkeys(("lines", "kept", *SKIPPED), 0)


def skipped_text(counts: dict[str, int]) -> str:
    """The skipped lines by reason, e.g. "2 malformed, 0 invalid UTF-8, 1 with control characters, ..."
    (blank lines only when there are some: a trailing empty line is common and harmless)."""
    return ", ".join(
        f"{counts.get(reason, 0)} {_SAID[reason]}"
        for reason in SKIPPED
        if reason != BLANK or counts.get(BLANK, 0)
    )


@dataclass(frozen=True)
class CountedLines:
    """A corpus read once: its name and its line counts (`new_counts`), reported in one line."""

    name: str
    counts: dict[str, int]

    def report(self) -> str:
        """One line for the run log, e.g. "eng-fra.tsv: 167130 lines, 167120 pairs kept; skipped: ..."."""
        kept, lines = self.counts["kept"], self.counts["lines"]
        return f"{self.name}: {lines} lines, {kept} pairs kept; skipped: {skipped_text(self.counts)}"
