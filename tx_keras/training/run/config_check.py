"""The config's one check before anything is built: the composed config read through its dataclasses,
then the rules that span groups. A mistake fails in one line naming the key, not minutes later.

Each group's keys, types and defaults are a dataclass in Hydra's ConfigStore (conf/__init__.py), so Hydra
refuses an unknown key or a wrong type while composing; each key's range or choices and the rules between
one group's keys are on that dataclass too (tx_keras/config_rules.py), so building it is checking it. What
no one group can say is here (`check_config`), and so is a user's own layer class, which only importing it
can check (`check_components`).

`check_config` imports no TensorFlow: `tx-train` runs it once per job before TensorFlow starts (seconds
saved on every typo); `check_components` runs once after start-up, before the model is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, MissingMandatoryValue, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from tx_keras.components import ComponentError, is_import_path, position_classes, resolve
from tx_keras.data.task_config import ParallelTextConfig, task_config
from tx_keras.models.model_config import COMPONENT_KINDS, ModelConfig
from tx_keras.training.run.error_line import error_line
from tx_keras.training.run.run_config import RunConfig
from tx_keras.user_error import ConfigError

# The groups read through one dataclass each (the data group's depends on data.name: task_config reads it).
_GROUPS = ("model", "trainer", "logging", "export")
_TOP_LEVEL = ("seed", "resume", "seeds")


def _check_keys(group: str, node: Mapping, schema: type) -> None:
    """Every key of a group is its dataclass's: only `+trainer.x=...` gets past Hydra's own check."""
    noun = "knob" if group == "model" else "key"  # the model's keys are its knobs everywhere else
    fields = {field.name: field for field in dataclasses.fields(schema)}
    for key, value in node.items():
        if key not in fields:
            raise ConfigError(
                f"{group}.{key} is not a {group.split('.')[0]} {noun}; the {noun}s: {', '.join(fields)}"
            )
        nested = fields[key].default_factory
        if isinstance(value, Mapping) and dataclasses.is_dataclass(nested):
            _check_keys(f"{group}.{key}", value, nested)


def _typed(cfg: DictConfig, group: str) -> Any:
    """One group read through its dataclass (its field rules and `__post_init__` run as it is built)."""
    try:
        return OmegaConf.to_object(cfg[group])
    except MissingMandatoryValue as error:  # `???` in a YAML file: a value the user must give
        key = f"{group}.{error.full_key}" if error.full_key else group
        raise ConfigError(f"{key} is required: set it on the command line, e.g. {key}=...") from None


def run_config(cfg: DictConfig) -> RunConfig:
    """The composed config as a `RunConfig`: every group typed and checked on its own."""
    for key in (*_GROUPS, "data", *_TOP_LEVEL):
        if key not in cfg:  # `~key` on the command line
            raise ConfigError(f"{key} is missing from the config")
    for group in _GROUPS:
        _check_keys(group, cfg[group], OmegaConf.get_type(cfg[group]))
    try:  # the task's own keys and value rules (its name included)
        data = task_config(cfg.data)
    except OmegaConfBaseException as error:  # `data.x=${nowhere}`, found as the task's values are resolved
        raise ConfigError(error_line(str(error))) from None
    except ValueError as error:
        raise ConfigError(str(error)) from None
    groups = {group: _typed(cfg, group) for group in _GROUPS}
    return RunConfig(**groups, data=data, **{key: cfg[key] for key in _TOP_LEVEL})


def check_config(cfg: DictConfig) -> RunConfig:
    """Raise `ConfigError` naming the key, the value and what is allowed, for the first problem found;
    return the typed config the job passes down.

    Imports nothing (a user's own layer classes wait for `check_components`), so it runs before
    TensorFlow starts.
    """
    run = run_config(cfg)
    trainer, data = run.trainer, run.data
    if trainer.shape_classes not in ("auto", None) and isinstance(data, ParallelTextConfig) and data.stream:
        raise ConfigError(
            f"trainer.shape_classes={trainer.shape_classes} with data.stream=true: the streamed corpus "
            "buckets by its own widths; use trainer.shape_classes=null"
        )
    if data.name != "parallel_text" and trainer.objective.endswith(("bleu", "chrf")):
        raise ConfigError(
            f"trainer.objective={trainer.objective} is measured only on real text (data=parallel_text)"
        )
    if run.export.length_penalty == "auto" and data.name != "parallel_text":
        raise ConfigError(
            "export.length_penalty=auto picks the alpha by validation chrF, measured only on real text "
            "(data=parallel_text): give a number, e.g. export.length_penalty=0.6"
        )
    return run


def check_components(model: ModelConfig) -> None:
    """The model rules only an import can check: a user's own layer classes exist and are Keras layers,
    and a rotating position encoding gets an even d_k. Imports Keras: run after TensorFlow starts."""
    for knob, kind in COMPONENT_KINDS.items():
        name = getattr(model, knob)
        if is_import_path(kind, name):
            try:
                resolve(kind, name)
            except ComponentError as error:
                raise ConfigError(f"model.{knob}={name!r} is not allowed; {error}") from None
    if position_classes(model.positions)[1] is not None and model.key_dim % 2:
        raise ConfigError(
            f"model.positions={model.positions} rotates pairs of features: d_model / num_heads = "
            f"{model.key_dim} must be even"
        )
