"""The `logging` config group's keys as a dataclass: what a run writes besides summary.json.

Hydra validates conf/logging/*.yaml against it (conf/__init__.py registers it as `schema/logging`), so an
unknown key or a wrong type fails while the config is composed, and each key's range or choices are on
its field (tx_keras/config_rules.py): building one is checking it. Imports nothing heavy: the config tree
imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from tx_keras.config_rules import at_least, between, check_rules, one_of, ruled


@dataclass(frozen=True)
class LoggingConfig:
    """TensorBoard and console output; conf/logging/default.yaml explains each key."""

    tensorboard: bool = True  # write TensorBoard event files (all of the below needs it)
    # the per-step training loss curve: a point every this many steps; 0 = off
    loss_every_steps: int = ruled(10, between(0, 10**9))
    # validation sentences whose attention and translations are logged
    probes: int = ruled(2, between(0, 10**4))
    attention_maps: str = ruled("auto", one_of("auto", "every", "first_last", "off"))  # when they are logged
    attention_tensors_mb: float = ruled(1.0, at_least(0))  # cap per logged epoch on the raw weights
    diagnostics_every: int = ruled(1, between(0, 10**6))  # epochs between diagnostics; 0 = off
    head_importance: bool = False  # the validation loss with each head masked out, at the end
    # console: 0 = the end-of-run report only | 1 = progress | 2 = TensorFlow's lines too
    verbose: int = ruled(1, one_of(0, 1, 2))
    progress_every_s: float = ruled(30, at_least(1))  # not a terminal: seconds between progress lines

    def __post_init__(self) -> None:
        check_rules(self, "logging")
