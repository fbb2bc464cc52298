"""The validation and test sets of a streamed corpus, chosen in one pass with bounded memory.

Each source sentence gets a stable hash (source_hash.py). The held-out sets are the sources with the
smallest hashes, whole (all their translations), until `num_test` then `num_validation` pairs are filled;
the translations of the source that overflows are dropped, never moved to another split (as
source_split.py does in memory). While the pass runs, only the current candidates are held: a pair whose
source hashes above the candidates' largest (once the others fill the sets) is training data at once, and a
candidate pushed out by a smaller hash becomes training data then. So memory is bounded by the held-out
size, whatever the corpus size.
"""

from __future__ import annotations

import bisect
from itertools import accumulate, islice

from tx_keras.data.source_split import flat_pairs, take_groups

Pair = tuple[str, str]


class HeldOutSources:
    """Feed every pair once with `add`; it returns the pairs that are (now known to be) training data."""

    def __init__(self, num_validation: int, num_test: int):
        self.needed = num_validation + num_test
        self.num_validation, self.num_test = num_validation, num_test
        self._groups: dict[int, list[Pair]] = {}  # source hash -> its pairs, the current candidates
        self._keys: list[int] = []  # the candidates' hashes, ascending
        self._sizes: list[int] = []  # their pair counts, in the same order
        self._held = 0  # pairs in the candidates
        self._filled: bool | None = None  # whether the candidates fill both sets (None: not known yet)

    def add(self, key: int, pair: Pair) -> list[Pair]:
        """`pair`, whose source hashes to `key`: [] when it is a candidate, else the pairs now known to
        be training data."""
        group = self._groups.get(key)
        if group is not None:
            group.append(pair)
            self._sizes[bisect.bisect_left(self._keys, key)] += 1
        elif self._held >= self.needed and key > self._keys[-1] and self._fill():
            return [pair]
        else:
            self._groups[key] = [pair]
            at = bisect.bisect_left(self._keys, key)
            self._keys.insert(at, key)
            self._sizes.insert(at, 1)
        self._held += 1
        self._filled = None
        return self._evict()

    def _evict(self) -> list[Pair]:
        """Drop the largest candidates while the others still fill the held-out sets."""
        released: list[Pair] = []
        while self._keys:
            largest = self._keys[-1]
            if self._held - len(self._groups[largest]) < self.needed or not self._fill_without_largest():
                break
            self._keys.pop()
            self._sizes.pop()
            group = self._groups.pop(largest)
            self._held -= len(group)
            self._filled = None
            released += group
        return released

    def _fill(self) -> bool:
        """Whether the candidates fill both sets: a larger key is training data only then (while the test
        set's overflowing source loses its surplus, `needed` pairs may not fill them). Known until the
        candidates change, so the pass pays for it once a change, not once a pair."""
        if self._filled is None:
            self._filled = self._first_fill(len(self._sizes), self._held)
        return self._filled

    def _fill_without_largest(self) -> bool:
        """Whether the other candidates fill both sets. The pass calls this for every new candidate, so it
        sums the counts in C (accumulate) and never sorts or copies the groups."""
        return self._first_fill(len(self._sizes) - 1, self._held - self._sizes[-1])

    def _first_fill(self, groups: int, pairs: int) -> bool:
        """Whether the first `groups` candidates (`pairs` pairs) fill both sets (the test set's overflowing
        source loses its surplus, so whole sources may need more than `needed` pairs)."""
        if self.num_test == 0:
            return pairs >= self.num_validation
        totals = list(accumulate(islice(self._sizes, groups)))
        end = bisect.bisect_left(totals, self.num_test)  # the test set's last source: its surplus is dropped
        return end < len(totals) and pairs - totals[end] >= self.num_validation

    def groups(self) -> list[tuple[int, list[Pair]]]:
        """The current candidates: (source hash, its pairs in the order added), by ascending hash."""
        return [(key, self._groups[key]) for key in self._keys]

    def splits(self) -> tuple[dict[str, list[Pair]], list[Pair]]:
        """After the pass: ({"test", "validation"} pairs, the candidates left over, which are training data).
        Test takes the smallest hashes first, then validation, each exactly its size when the corpus has
        enough sources; the overflowing source's surplus translations are dropped."""
        ordered = [self._groups[key] for key in sorted(self._groups)]
        test, rest = take_groups(ordered, self.num_test)
        validation, train = take_groups(rest, self.num_validation)
        return {"test": flat_pairs(test), "validation": flat_pairs(validation)}, flat_pairs(train)
