"""Ablation tasks over abstract symbols: copy, reverse and sort isolate what attention must learn.

copy needs position-aligned attention, reverse needs attention to the mirrored position and sort needs
content-based (not positional) attention, with no linguistic structure to lean on.
"""

from collections.abc import Callable, Mapping

import numpy as np

from tx_keras.data.task import Sentence, Task, split_sizes
from tx_keras.data.vocabulary import Vocabulary

TRANSFORMS: dict[str, Callable[[list[int]], list[int]]] = {
    "copy": lambda symbols: list(symbols),
    "reverse": lambda symbols: symbols[::-1],
    "sort": sorted,
}


def build_symbol_task(name: str, cfg: Mapping) -> Task:
    """Config keys: seed (0), vocab_size (16), length (12), min_length (= length), num_train/validation/test.

    Lengths are drawn uniformly from [min_length, length]; symbols "s0".."s{vocab_size-1}" are sorted by
    index. Source and target share one vocabulary.
    """
    transform = TRANSFORMS[name]
    vocab_size = int(cfg.get("vocab_size", 16))
    length = int(cfg.get("length", 12))
    min_length = int(cfg.get("min_length", length))
    if vocab_size < 1:
        raise ValueError(f"data.vocab_size={vocab_size} must be >= 1")
    if not 1 <= min_length <= length:
        raise ValueError(
            f"data.min_length={min_length} and data.length={length} need 1 <= min_length <= length"
        )
    names = [f"s{i}" for i in range(vocab_size)]

    def draw(rng: np.random.Generator) -> tuple[Sentence, Sentence]:
        symbols = rng.integers(vocab_size, size=rng.integers(min_length, length + 1)).tolist()
        return [names[i] for i in symbols], [names[i] for i in transform(symbols)]

    vocab = Vocabulary(names)
    return Task.sample(
        name=name,
        source_vocab=vocab,
        target_vocab=vocab,
        draw=draw,
        seed=int(cfg.get("seed", 0)),
        sizes=split_sizes(cfg),
        capacity=sum(vocab_size**n for n in range(min_length, length + 1)),
        source_length=length + 1,
        target_length=length + 2,
    )
