"""Two-argument facts mod p, `a b -> f(a, b)`: a random lookup table (pure memory) and modular addition
(structure), the pair that separates what the FFN stores from what attention can compute.

There are only p * p facts (841 for p = 29), so the natural question is memorisation: by default every
fact is trained on and validation and test are all the facts again. `holdout` > 0 keeps a share of the
facts out of training instead (half for validation, half for test), to ask about generalisation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from tx_keras.data.task import Task
from tx_keras.data.vocabulary import Vocabulary

Table = Callable[[int, Mapping], np.ndarray]


def random_table(modulus: int, cfg: Mapping) -> np.ndarray:
    """A (p, p) table of symbols drawn uniformly from its own `table_seed`, not the run's seed: every run
    seed (and every split) sees the same facts."""
    return np.random.default_rng(int(cfg.get("table_seed", 0))).integers(modulus, size=(modulus, modulus))


def addition_table(modulus: int, cfg: Mapping) -> np.ndarray:
    """(a + b) mod p for every pair."""
    numbers = np.arange(modulus)
    return (numbers[:, None] + numbers[None, :]) % modulus


TABLES: dict[str, Table] = {"lookup": random_table, "modular_addition": addition_table}


def build_fact_table(name: str, cfg: Mapping) -> Task:
    """Config keys: modulus (29), table_seed (0, lookup only), seed (0: the order of the facts and which are
    held out), holdout (0.0), num_train (training rows per epoch, the training facts cycled; default 10
    times the facts).

    Source rows are `a b EOS`, target rows `SOS f(a,b) EOS`; tokens are the numbers "0".."p-1", shared by
    source and target. Greedy exact-match is then the share of facts recalled.
    """
    modulus = int(cfg.get("modulus", 29))
    holdout = float(cfg.get("holdout", 0.0))
    if modulus < 2:
        raise ValueError(f"data.modulus={modulus} must be >= 2")
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"data.holdout={holdout} must be in [0, 1)")
    table = TABLES[name](modulus, cfg)
    vocab = Vocabulary([str(i) for i in range(modulus)])
    first, second = (
        axis.ravel() for axis in np.meshgrid(np.arange(modulus), np.arange(modulus), indexing="ij")
    )
    ids = np.asarray(vocab.encode([str(i) for i in range(modulus)]), dtype=np.int32)
    source = np.stack([ids[first], ids[second], np.full_like(first, Vocabulary.EOS)], axis=1).astype(np.int32)
    answers = ids[table[first, second]]
    target = np.stack(
        [np.full_like(answers, Vocabulary.SOS), answers, np.full_like(answers, Vocabulary.EOS)], axis=1
    ).astype(np.int32)
    order = np.random.default_rng(int(cfg.get("seed", 0))).permutation(len(source))
    held = int(round(holdout * len(source)))
    if holdout and not 2 <= held < len(source):
        raise ValueError(
            f"data.holdout={holdout} leaves {held} of {len(source)} facts for validation and test"
        )
    training, kept_out = order[held:], order[:held]
    num_train = int(cfg.get("num_train", 10 * len(training)))
    if num_train < 1:
        raise ValueError(f"data.num_train={num_train} must be >= 1")
    rows = np.resize(training, num_train)  # cycled: every training fact as often as the size allows
    if held:
        evaluated = {"validation": kept_out[: held // 2], "test": kept_out[held // 2 :]}
    else:
        every = np.arange(len(source))
        evaluated = {"validation": every, "test": every}
    splits = {"train": (source[rows], target[rows])}
    splits.update({split: (source[chosen], target[chosen]) for split, chosen in evaluated.items()})
    return Task(name, vocab, vocab, splits)
