"""Ablation tasks over abstract symbols: copy, reverse and sort isolate what attention must learn.

copy needs position-aligned attention, reverse needs attention to the mirrored position and sort needs
content-based (not positional) attention, with no linguistic structure to lean on.
"""

from collections.abc import Callable

import numpy as np

from tx_keras.data.task import Sentence, Task
from tx_keras.data.task_config import SymbolTaskConfig
from tx_keras.data.vocabulary import Vocabulary

TRANSFORMS: dict[str, Callable[[list[int]], list[int]]] = {
    "copy": lambda symbols: list(symbols),
    "reverse": lambda symbols: symbols[::-1],
    "sort": sorted,
}


def build_symbol_task(config: SymbolTaskConfig) -> Task:
    """copy, reverse or sort (`config.name`), keys in task_config.py.

    Lengths are drawn uniformly from [min_length, length]; symbols "s0".."s{vocab_size-1}" are sorted by
    index. Source and target share one vocabulary.
    """
    transform = TRANSFORMS[config.name]
    vocab_size, length, min_length = config.vocab_size, config.length, config.min_length
    names = [f"s{i}" for i in range(vocab_size)]

    def draw(rng: np.random.Generator) -> tuple[Sentence, Sentence]:
        symbols = rng.integers(vocab_size, size=rng.integers(min_length, length + 1)).tolist()
        return [names[i] for i in symbols], [names[i] for i in transform(symbols)]

    vocab = Vocabulary(names)
    return Task.sample(
        name=config.name,
        source_vocab=vocab,
        target_vocab=vocab,
        draw=draw,
        seed=config.seed,
        sizes=config.split_sizes,
        capacity=sum(vocab_size**n for n in range(min_length, length + 1)),
        source_length=length + 1,
        target_length=length + 2,
    )
