"""Each task family's config keys as a frozen dataclass: their types, defaults and value rules in one place.

Hydra validates the `data` config group against these (`register_schemas`, called by conf/__init__.py:
each conf/data/*.yaml names its schema first in its defaults list), so an unknown key or a wrong type fails
while the config is composed, before anything is built; `task_config` turns a composed `data` node (or a
plain dict, as the tests and the export pass) into the dataclass the task builder reads. The YAML files
state the same values with a comment for each key (tests/test_task_config.py keeps the two equal).
Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING, DictConfig, OmegaConf

from tx_keras.config_rules import at_least, between, check_rules, fraction, one_of, or_null, ruled
from tx_keras.data.text_format import TOKENIZER_CHOICES
from tx_keras.special_tokens import SPECIALS

SCHEMA_GROUP = "schema/data"  # the ConfigStore group of the schemas: `- /schema/data/<name>@_here_`
PAIRS = 10**9  # the most sentence pairs or rows a split may ask for: far above any corpus, below int64's end


@dataclass(frozen=True)
class TaskConfig:
    """The keys every task has."""

    name: str  # the task (registry.py); picks the dataclass below
    seed: int = 0  # the task's sampling / splitting seed (the YAML files follow the run seed)

    def __post_init__(self) -> None:
        check_rules(self, "data")


@dataclass(frozen=True)
class SampledTaskConfig(TaskConfig):
    """A task whose splits are drawn by `Task.sample`: distinct sources, sizes chosen freely."""

    num_train: int = ruled(20000, between(1, PAIRS))  # training pairs
    num_validation: int = ruled(1000, between(1, PAIRS))  # validation pairs (sources disjoint from train)
    num_test: int = ruled(1000, between(1, PAIRS))  # test pairs (sources disjoint from train and validation)

    @property
    def split_sizes(self) -> dict[str, int]:
        return {"train": self.num_train, "validation": self.num_validation, "test": self.num_test}


@dataclass(frozen=True)
class TranslationConfig(SampledTaskConfig):
    """The synthetic English -> French grammar (translation.py): only the split sizes."""


@dataclass(frozen=True)
class SymbolTaskConfig(SampledTaskConfig):
    """copy, reverse, sort (symbol_tasks.py): lengths drawn uniformly from [min_length, length]."""

    vocab_size: int = ruled(16, between(1, 10**6))  # distinct symbols
    length: int = ruled(12, between(1, 10**5))  # longest sequence
    min_length: int = ruled(12, between(1, 10**5))  # shortest sequence (= length: fixed length)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min_length > self.length:
            raise ValueError(f"data.min_length={self.min_length} must be <= data.length={self.length}")


@dataclass(frozen=True)
class AssociativeRecallConfig(SampledTaskConfig):
    """Multi-query associative recall (associative_recall.py)."""

    # distinct key symbols (the keys of one sequence are distinct)
    num_keys: int = ruled(32, between(1, 10**6))
    num_values: int = ruled(32, between(1, 10**6))  # distinct value symbols (values may repeat)
    min_kv_pairs: int = ruled(8, between(1, 10**5))  # fewest key-value pairs in a sequence
    max_kv_pairs: int = ruled(16, between(1, 10**5))  # most key-value pairs (<= num_keys)
    num_queries: int = ruled(16, between(1, 10**5))  # queries per sequence

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.min_kv_pairs <= self.max_kv_pairs <= self.num_keys:
            raise ValueError(
                f"data.min_kv_pairs={self.min_kv_pairs}, data.max_kv_pairs={self.max_kv_pairs} and "
                f"data.num_keys={self.num_keys} need 1 <= min_kv_pairs <= max_kv_pairs <= num_keys "
                "(the keys of a sequence are distinct)"
            )


@dataclass(frozen=True)
class FactTableConfig(TaskConfig):
    """Facts `a b -> f(a, b)` mod `modulus` (fact_tables.py); modular_addition uses it as is."""

    modulus: int = ruled(29, between(2, 10**4))  # numbers 0..modulus-1; modulus^2 facts
    # share of the facts kept out of training (half validation, half test)
    holdout: float = ruled(0.0, fraction)
    # training rows per epoch: the training facts cycled (10 passes over 841)
    num_train: int = ruled(8410, between(1, PAIRS))


@dataclass(frozen=True)
class LookupConfig(FactTableConfig):
    """The random lookup table: its facts come from their own seed."""

    # the table's seed, fixed so every run seed learns the same table
    table_seed: int = ruled(0, at_least(0))


@dataclass(frozen=True)
class ParallelTextConfig(TaskConfig):
    """A real parallel corpus (parallel_text.py); the keys are explained in conf/data/parallel_text.yaml."""

    path: str = MISSING  # required: a file, a .zip of one, or an http(s):// URL
    sha256: str | None = None  # optional checksum of the file
    cache_dir: str | None = None  # download/vocabulary cache; None = $TX_KERAS_CACHE or ~/.cache/...
    member: str | None = None  # the file inside a .zip; None = its only .txt/.tsv
    source_column: int = ruled(0, between(0, 10**4))  # tab-separated column of the source sentence
    target_column: int = ruled(1, between(0, 10**4))  # tab-separated column of the target sentence
    lowercase: bool = False  # lower-case both sides
    # pairs with a longer side are skipped; None = no limit
    max_words: int | None = ruled(40, or_null(between(1, 10**6, "for no limit")))
    max_pairs: int | None = ruled(None, or_null(between(1, PAIRS, "for no limit")))  # keep only this many
    num_validation: int = ruled(1000, between(1, PAIRS))  # validation pairs
    num_test: int = ruled(2000, between(1, PAIRS))  # test pairs for BLEU / chrF; the rest is training data
    # wordpiece | characters | auto (per side, unspaced_script.py)
    tokenizer: str = ruled("auto", one_of(*TOKENIZER_CHOICES))
    vocab_size: int = ruled(8000, between(1, 10**7))  # tokens per vocabulary, the 4 special tokens included
    shared_vocabulary: bool = False  # one vocabulary learned from both sides
    stream: bool = False  # read the training split from disk each epoch (streamed_parallel_text.py)
    # streamed: pairs sampled (seeded) to learn the vocabularies from
    stream_sample: int = ruled(200000, between(1, PAIRS))
    stream_shuffle_buffer: int = ruled(20000, between(1, 10**8))  # streamed: pairs in the shuffle buffer

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.stream and self.max_pairs is not None:
            raise ValueError(
                "data.max_pairs needs the in-memory corpus; with data.stream=true set it to null"
            )
        if self.vocab_size <= len(SPECIALS):
            raise ValueError(
                f"data.vocab_size={self.vocab_size} leaves no room beside the {len(SPECIALS)} special tokens "
                f"({', '.join(SPECIALS)}); use at least {len(SPECIALS) + 1} (thousands for WordPiece)"
            )


# data.name -> its config family; the order is the order `TASKS` lists them in.
TASK_CONFIGS: dict[str, type[TaskConfig]] = {
    "translation": TranslationConfig,
    "copy": SymbolTaskConfig,
    "reverse": SymbolTaskConfig,
    "sort": SymbolTaskConfig,
    "parallel_text": ParallelTextConfig,
    "lookup": LookupConfig,
    "modular_addition": FactTableConfig,
    "associative_recall": AssociativeRecallConfig,
}
TASKS = list(TASK_CONFIGS)

# ConfigStore name -> schema (conf/data/<task>.yaml names one of these).
SCHEMAS: dict[str, type[TaskConfig]] = {
    "translation": TranslationConfig,
    "symbol_task": SymbolTaskConfig,
    "parallel_text": ParallelTextConfig,
    "lookup": LookupConfig,
    "fact_table": FactTableConfig,
    "associative_recall": AssociativeRecallConfig,
}


def task_config(cfg: Mapping[str, Any] | TaskConfig) -> TaskConfig:
    """The dataclass for a `data` config: a composed DictConfig (interpolations resolved), a plain dict
    (missing keys take their defaults) or already a TaskConfig. Raises ValueError in one line for an
    unknown task, an unknown key, a required key left unset or a value out of range."""
    if isinstance(cfg, TaskConfig):
        return cfg
    values = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
    name = values.get("name")
    if name not in TASK_CONFIGS:
        raise ValueError(f"data.name={name!r} is not a task; choose one of: {', '.join(TASKS)}")
    config_class = TASK_CONFIGS[name]
    known = [field.name for field in dataclasses.fields(config_class)]
    unknown = [key for key in values if key not in known]
    if unknown:
        raise ValueError(f"data.{unknown[0]} is not a key of data={name}; its keys: {', '.join(known)}")
    # `???` in the YAML file or on the command line (before the range rules compare it), or left out of a dict
    missing = [key for key, value in values.items() if value == MISSING]
    config = config_class(**values) if not missing else None
    missing = missing or [f.name for f in dataclasses.fields(config) if getattr(config, f.name) == MISSING]
    if missing:
        raise ValueError(
            f"data.{missing[0]} is required: set it on the command line, e.g. data.{missing[0]}=..."
        )
    return config


def register_schemas() -> None:
    """Store every schema in Hydra's ConfigStore under `schema/data/<name>`.

    A frozen dataclass would become a read-only node that the YAML values and command-line overrides
    cannot be merged into, so each is stored as a writable structured node (types, keys and defaults
    still come from the dataclass)."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    for name, schema in SCHEMAS.items():
        node = OmegaConf.structured(schema)
        OmegaConf.set_readonly(node, False)
        store.store(group=SCHEMA_GROUP, name=name, node=node)
