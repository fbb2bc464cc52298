"""The `logging` config group's keys as a dataclass: what a run writes besides summary.json.

Hydra validates conf/logging/*.yaml against it (conf/__init__.py registers it as `schema/logging`), so an
unknown key or a wrong type fails while the config is composed; the value rules are
tx_keras/config_check.py's. Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoggingConfig:
    """TensorBoard and console output; conf/logging/default.yaml explains each key."""

    tensorboard: bool = True  # write TensorBoard event files (all of the below needs it)
    loss_every_steps: int = 10  # the per-step training loss curve: a point every this many steps; 0 = off
    probes: int = 2  # validation sentences whose attention maps and translations are logged
    attention_maps: str = "auto"  # auto | every | first_last | off
    attention_tensors_mb: float = 1.0  # cap per logged epoch on the raw weights for the Attention tab
    diagnostics_every: int = 1  # epochs between diagnostics; 0 = off
    head_importance: bool = False  # the validation loss with each head masked out, at the end
    verbose: int = 1  # console: 0 = the end-of-run report only | 1 = progress | 2 = TensorFlow's lines too
    progress_every_s: float = 30  # not a terminal: seconds between progress lines
