"""Splits sentence pairs into train/validation/test by source sentence.

Tatoeba gives many sources several translations ("Run!" -> "Cours !", "Courez !"). A random split by pair
would put "Run!" in training and in the test set, so the test score would partly measure memorisation. Here
all pairs of a source go to one split, chosen by a seeded shuffle of the sources.
"""

from collections.abc import Sequence

import numpy as np

from tx_keras.data.corpus_error import CorpusError


def split_by_source(
    pairs: Sequence[tuple[str, str]],
    num_validation: int,
    num_test: int,
    seed: int,
    max_pairs: int | None = None,
) -> dict[str, list[tuple[str, str]]]:
    """{"train", "validation", "test"} lists of pairs, no source sentence in two of them.

    Sources (with all their pairs) are shuffled with `numpy.random.default_rng(seed)`; the first ones, up
    to exactly `max_pairs` pairs when given, are kept. Test, then validation, take whole sources up to exactly
    the requested number of pairs: the surplus translations of the source that overflows are dropped, never
    moved to another split. Everything after them is train. The same pairs and seed give the same split.
    """
    for key, value in (("num_validation", num_validation), ("num_test", num_test)):
        if value < 0:
            raise CorpusError(f"{key}={value} must be >= 0")
    if max_pairs is not None and max_pairs < 1:
        raise CorpusError(f"max_pairs={max_pairs} must be >= 1")
    # A dict keeps first-occurrence order, so the groups (and the shuffle) never depend on string hashing.
    groups: dict[str, list[tuple[str, str]]] = {}
    for pair in pairs:
        groups.setdefault(pair[0], []).append(pair)
    ordered = list(groups.values())
    shuffled = [ordered[i] for i in np.random.default_rng(seed).permutation(len(ordered))]
    if max_pairs is not None:
        shuffled = take_groups(shuffled, max_pairs)[0]
    test, rest = take_groups(shuffled, num_test)
    validation, train = take_groups(rest, num_validation)
    splits = {
        name: flat_pairs(part)
        for name, part in (("train", train), ("validation", validation), ("test", test))
    }
    if len(splits["test"]) < num_test or len(splits["validation"]) < num_validation or not splits["train"]:
        total = sum(len(group) for group in shuffled)
        capped = f" (max_pairs={max_pairs})" if max_pairs is not None else ""
        raise CorpusError(
            f"{total} sentence pairs{capped} with {len(shuffled)} distinct sources are too few for "
            f"num_validation={num_validation} + num_test={num_test} pairs and a non-empty training split"
        )
    return splits


def take_groups(
    groups: list[list[tuple[str, str]]], count: int
) -> tuple[list[list[tuple[str, str]]], list[list[tuple[str, str]]]]:
    """The first groups holding exactly `count` pairs (the overflowing group cut), and the groups after."""
    taken: list[list[tuple[str, str]]] = []
    missing = count
    for used, group in enumerate(groups):
        if missing <= 0:
            return taken, groups[used:]
        taken.append(group[:missing])
        missing -= len(taken[-1])
    return taken, []


def flat_pairs(groups: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    return [pair for group in groups for pair in group]
