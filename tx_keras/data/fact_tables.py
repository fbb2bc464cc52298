"""Two-argument facts mod p, `a b -> f(a, b)`: a random lookup table (pure memory) and modular addition
(structure), the pair that separates what the FFN stores from what attention can compute.

There are only p * p facts (841 for p = 29), so the natural question is memorisation: by default every
fact is trained on and validation and test are all the facts again. `holdout` > 0 keeps a share of the
facts out of training instead (half for validation, half for test), to ask about generalisation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tx_keras.data.task import Task
from tx_keras.data.task_config import FactTableConfig, LookupConfig
from tx_keras.data.vocabulary import Vocabulary

Table = Callable[[FactTableConfig], np.ndarray]


def random_table(config: LookupConfig) -> np.ndarray:
    """A (p, p) table of symbols drawn uniformly from its own `table_seed`, not the run's seed: every run
    seed (and every split) sees the same facts."""
    modulus = config.modulus
    return np.random.default_rng(config.table_seed).integers(modulus, size=(modulus, modulus))


def addition_table(config: FactTableConfig) -> np.ndarray:
    """(a + b) mod p for every pair."""
    numbers = np.arange(config.modulus)
    return (numbers[:, None] + numbers[None, :]) % config.modulus


TABLES: dict[str, Table] = {"lookup": random_table, "modular_addition": addition_table}


def build_fact_table(config: FactTableConfig) -> Task:
    """lookup or modular_addition (`config.name`); keys in task_config.py. The seed orders the facts and
    picks which are held out; num_train rows per epoch cycle the training facts.

    Source rows are `a b EOS`, target rows `SOS f(a,b) EOS`; tokens are the numbers "0".."p-1", shared by
    source and target. Greedy exact-match is then the share of facts recalled.
    """
    name, modulus, holdout = config.name, config.modulus, config.holdout
    table = TABLES[name](config)
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
    order = np.random.default_rng(config.seed).permutation(len(source))
    held = int(round(holdout * len(source)))
    if holdout and not 2 <= held < len(source):
        raise ValueError(
            f"data.holdout={holdout} leaves {held} of {len(source)} facts for validation and test"
        )
    training, kept_out = order[held:], order[:held]
    rows = np.resize(training, config.num_train)  # cycled: every training fact as often as the size allows
    if held:
        evaluated = {"validation": kept_out[: held // 2], "test": kept_out[held // 2 :]}
    else:
        every = np.arange(len(source))
        evaluated = {"validation": every, "test": every}
    splits = {"train": (source[rows], target[rows])}
    splits.update({split: (source[chosen], target[chosen]) for split, chosen in evaluated.items()})
    return Task(name, vocab, vocab, splits)
