"""Multi-query associative recall (Arora et al. 2023, "Zoology"): queries and n key-value pairs; the
answer to each query is the value its key was paired with.

A task that needs several lookups at once (each query must find its key, then the value next to it), the
kind of task on which the number of attention heads can matter where copy or reverse cannot tell them apart.

The queries come first, so the decoder's i-th answer sits at the position of the source's i-th query, the
alignment every encoder-decoder learns first (as on copy), and no fillers are needed to pin the queries.
Measured (docs/claims.md): in either order a 2 + 2 encoder-decoder stays on the "guess a value present"
plateau for the 2000 steps of the heads claim.
"""

from __future__ import annotations

import math

import numpy as np

from tx_keras.data.task import Sentence, Task
from tx_keras.data.task_config import AssociativeRecallConfig
from tx_keras.data.vocabulary import Vocabulary


def build_associative_recall(config: AssociativeRecallConfig) -> Task:
    """Keys and their rules in task_config.py.

    Source: `q_1 ... q_m k v k v ... EOS`: m = num_queries keys drawn from the n (a key may be asked twice),
    then the n pairs (n uniform in [min_kv_pairs, max_kv_pairs], distinct keys, values with repetition).
    Target: the m values, in query order. Keys "k0".., values "v0"..; the target vocabulary holds only
    the values.
    """
    num_keys, num_values, num_queries = config.num_keys, config.num_values, config.num_queries
    min_kv_pairs, max_kv_pairs = config.min_kv_pairs, config.max_kv_pairs
    keys = [f"k{i}" for i in range(num_keys)]
    values = [f"v{i}" for i in range(num_values)]

    def draw(rng: np.random.Generator) -> tuple[Sentence, Sentence]:
        pairs = int(rng.integers(min_kv_pairs, max_kv_pairs + 1))
        chosen = rng.choice(num_keys, size=pairs, replace=False)
        paired = rng.integers(num_values, size=pairs)
        asked = rng.integers(pairs, size=num_queries)
        source = [keys[chosen[i]] for i in asked]
        source += [token for k, v in zip(chosen, paired, strict=True) for token in (keys[k], values[v])]
        return source, [values[paired[i]] for i in asked]

    return Task.sample(
        name="associative_recall",
        source_vocab=Vocabulary([*keys, *values]),
        target_vocab=Vocabulary(values),
        draw=draw,
        seed=config.seed,
        sizes=config.split_sizes,
        capacity=sum(
            math.perm(num_keys, n) * num_values**n * n**num_queries
            for n in range(min_kv_pairs, max_kv_pairs + 1)
        ),
        source_length=num_queries + 2 * max_kv_pairs + 1,
        target_length=num_queries + 2,
    )
