"""Checks a composed config before anything is built, so a typo fails in one line, not minutes later.

Imports no TensorFlow: `tx-train` runs the check before TensorFlow starts (seconds saved on every typo),
leaving only what needs an import (a user's own layer class, the rotary rule) to the full check after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

from omegaconf import ListConfig, MissingMandatoryValue

from tx_keras.components import BUILTINS, ComponentError, is_import_path, position_classes, resolve
from tx_keras.data import TASKS
from tx_keras.data.batching import BATCHING
from tx_keras.data.task_config import task_config
from tx_keras.models.model_config import ATTENTION_KINDS, FIELDS, ModelConfig
from tx_keras.norm_placement import NORM_MODES
from tx_keras.training.choices import PRECISIONS, SCHEDULES
from tx_keras.user_error import UserError

# The summary metrics a run can return to a sweeper.
OBJECTIVES = tuple(
    f"{split}_{metric}"
    for split in ("validation", "test")
    for metric in ("exact_match", "accuracy", "loss", "bleu", "chrf")  # bleu, chrf: real-text tasks only
)


class ConfigError(UserError):
    """A user's configuration mistake: printed as one line, never as a traceback."""


def _one_of(*allowed: Any) -> Callable[[Any], str | None]:
    return lambda value: None if value in allowed else f"choose one of: {', '.join(map(str, allowed))}"


def _at_least(low: float) -> Callable[[Any], str | None]:
    return lambda value: None if value >= low else f"must be >= {low}"


def _fraction(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else "must be in [0, 1)"


def _share(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be in [0, 1]"


def _length_penalty(value: Any) -> str | None:
    """`auto` (chosen on validation, tx_keras/evaluation/length_penalty_choice.py) or an alpha >= 0."""
    if isinstance(value, str):
        return None if value == "auto" else "choose auto or a number >= 0"
    return None if value >= 0 else "must be >= 0 (or auto)"


def _penalty_grid(value: Any) -> str | None:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value)
    return None if len(value) and numbers else "must be a non-empty list of numbers >= 0, e.g. [0.6,1.0,1.4]"


def _component(kind: str) -> Callable[[str], str | None]:
    """A component name must resolve to a layer class (components.py) before anything is built."""

    def problem(name: str) -> str | None:
        if name in BUILTINS[kind]:
            return None  # ours: nothing to import to know it exists
        try:
            resolve(kind, name)
        except ComponentError as error:
            return str(error)
        return None

    return problem


# The knobs that name a component (a built-in or a user's import path): knob -> its kind in BUILTINS.
_COMPONENT_KINDS = {
    "attention_impl": "attention",
    "positions": "positions",
    "ffn_impl": "ffn",
    "norm_impl": "norm",
}

# The value rule of each ModelConfig field that has one (its type comes from the dataclass).
_MODEL_VALUES: dict[str, Callable[[Any], str | None]] = {
    "num_encoder_layers": _at_least(1),
    "num_decoder_layers": _at_least(1),
    "d_model": _at_least(1),
    "num_heads": _at_least(1),
    "dff": _at_least(1),
    "dropout": _fraction,
    "norm": _one_of(*NORM_MODES),
    "activation": _one_of("relu", "gelu", "silu", "tanh"),
    "attention": _one_of(*ATTENTION_KINDS),
    **{knob: _component(kind) for knob, kind in _COMPONENT_KINDS.items()},
}
assert set(_MODEL_VALUES) <= set(FIELDS), "a value rule for a knob ModelConfig does not have"

# How a type is named to a user: a YAML list is a ListConfig once composed.
_TYPE_NAMES = {type(None): "null", ListConfig: "list"}

# Every key the run reads: key -> (accepted types, value rule or None).
_RULES: dict[str, tuple[tuple[type, ...], Callable[[Any], str | None] | None]] = {
    "seed": ((int,), _at_least(0)),
    **{
        f"model.{name}": ((float, int) if hint is float else (hint,), _MODEL_VALUES.get(name))
        for name, hint in get_type_hints(ModelConfig).items()
    },
    "data.name": ((str,), _one_of(*TASKS)),
    "trainer.epochs": ((int,), _at_least(1)),
    "trainer.batch_size": ((int,), _at_least(1)),
    "trainer.batching": ((str,), _one_of(*BATCHING)),
    "trainer.batch_tokens": ((int, type(None)), None),
    "trainer.max_train_minutes": ((int, float, type(None)), None),
    "trainer.schedule": ((str,), _one_of(*SCHEDULES)),
    "trainer.cooldown": ((float, int), _share),
    "trainer.warmup_steps": ((int,), _at_least(0)),  # >= 1 for noam: checked below
    "trainer.lr_scale": ((float, int), _at_least(1e-12)),
    "trainer.learning_rate": ((float, int), _at_least(1e-12)),
    "trainer.label_smoothing": ((float, int), _fraction),
    "trainer.clip_norm": ((float, int, type(None)), None),
    "trainer.deterministic": ((bool,), None),
    "trainer.jit_compile": ((bool, str), _one_of(True, False, "auto")),
    "trainer.precision": ((str,), _one_of(*PRECISIONS)),
    "trainer.checkpoint_every": ((int,), _at_least(0)),
    "trainer.checkpoint_every_minutes": (
        (int, float, type(None)),
        lambda value: None if value is None or value > 0 else "must be > 0 (or null for none)",
    ),
    "trainer.early_stopping.patience": (
        (int, type(None)),
        lambda value: None if value is None else _at_least(1)(value),
    ),
    "trainer.early_stopping.monitor": (
        (str,),
        _one_of("val_exact_match", "val_loss", "val_accuracy", "loss", "accuracy"),
    ),
    "trainer.early_stopping.min_delta": ((float, int), _at_least(0)),
    "trainer.early_stopping.stop_at": ((float, int, type(None)), None),
    "trainer.early_stopping.in_sweeps": ((bool,), None),
    "logging.head_importance": ((bool,), None),
    "logging.verbose": ((int,), _one_of(0, 1, 2)),
    "logging.progress_every_s": ((float, int), _at_least(1)),
    "logging.loss_every_steps": ((int,), _at_least(0)),
    "resume": ((str, type(None)), None),
    "trainer.objective": ((str,), _one_of(*OBJECTIVES)),
    "export.enabled": ((bool,), None),
    "export.beam_width": ((int,), _at_least(1)),
    "export.length_penalty": ((float, int, str), _length_penalty),
    "export.length_penalty_grid": ((ListConfig, list), _penalty_grid),
    "export.attention": ((str,), _one_of("mean", "heads")),
}


def _lookup(cfg: Mapping, dotted: str) -> tuple[bool, Any]:
    node: Any = cfg
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        try:
            node = node[part]
        except MissingMandatoryValue:  # `???` in a YAML file: a value the user must give
            raise ConfigError(
                f"{dotted} is required: set it on the command line, e.g. {dotted}=..."
            ) from None
    return True, node


def _check_model(model: Mapping, imports: bool) -> None:
    """The rules between model knobs (each knob's own type and value are checked with the others)."""
    unknown = [key for key in model if key not in FIELDS]
    if unknown:  # only `+model.x=...` gets past the schema
        raise ConfigError(f"model.{unknown[0]} is not a model knob; the knobs: {', '.join(FIELDS)}")
    d_model, heads = model["d_model"], model["num_heads"]
    if d_model % heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0 and h <= 64]
        raise ConfigError(
            f"model.num_heads={heads} does not divide model.d_model={d_model}; "
            f"choose num_heads in {', '.join(map(str, divisors))}"
        )
    if model["fused_qkv"] and (model["attention_impl"] != "fused" or model["attention"] != "full"):
        raise ConfigError(
            "model.fused_qkv=true needs model.attention_impl=fused and model.attention=full "
            "(the fused q/k/v matmul belongs to the fused attention layer)"
        )
    key_dim = ModelConfig(**model).key_dim
    if imports and position_classes(model["positions"])[1] is not None and key_dim % 2:
        raise ConfigError(
            f"model.positions={model['positions']} rotates pairs of features: d_model / num_heads = "
            f"{key_dim} must be even"
        )


def _user_class(key: str, value: Any) -> bool:
    """Whether `key=value` names a user's own layer class by import path (checked only by importing it)."""
    kind = _COMPONENT_KINDS.get(key.removeprefix("model.")) if key.startswith("model.") else None
    return kind is not None and is_import_path(kind, value)


def check_config(cfg: Mapping, imports: bool = True) -> None:
    """Raise `ConfigError` naming the key, the value and what is allowed, for the first problem found.

    `imports=False` checks everything that needs no import (before TensorFlow starts); a user's own layer
    classes and the rotary rule, which import Keras, wait for the full check.
    """
    for key, (types, rule) in _RULES.items():
        present, value = _lookup(cfg, key)
        if not present:
            raise ConfigError(f"{key} is missing from the config")
        # bool is an int in Python: `model.d_model=true` must still be refused.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join(dict.fromkeys(_TYPE_NAMES.get(t, t.__name__) for t in types))
            raise ConfigError(f"{key}={value!r} has the wrong type: expected {names}")
        problem = rule(value) if rule and (imports or not _user_class(key, value)) else None
        if problem:
            raise ConfigError(
                f"{key}={value!r} {problem}"
                if problem.startswith("must")
                else f"{key}={value!r} is not allowed; {problem}"
            )
    _check_model(cfg["model"], imports)
    trainer = cfg["trainer"]
    if trainer["schedule"] == "noam" and trainer["warmup_steps"] < 1:
        raise ConfigError(
            f"trainer.warmup_steps={trainer['warmup_steps']} must be >= 1 with trainer.schedule=noam "
            "(warm-up 0 needs trainer.schedule=constant)"
        )
    data = cfg["data"]
    try:  # each task's keys and value rules (types: the `data` schemas, checked at composition)
        task_config(data)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    minutes = cfg["trainer"]["max_train_minutes"]
    if minutes is not None and minutes <= 0:
        raise ConfigError(f"trainer.max_train_minutes={minutes} must be > 0 (or null for no time limit)")
    tokens = cfg["trainer"]["batch_tokens"]
    if tokens is not None and (tokens < 1 or cfg["trainer"]["batching"] != "bucket"):
        raise ConfigError(f"trainer.batch_tokens={tokens} needs trainer.batching=bucket and a value >= 1")
    if data["name"] != "parallel_text" and cfg["trainer"]["objective"].endswith(("bleu", "chrf")):
        objective = cfg["trainer"]["objective"]
        raise ConfigError(f"trainer.objective={objective} is measured only on real text (data=parallel_text)")
    if cfg["export"]["length_penalty"] == "auto" and data["name"] != "parallel_text":
        raise ConfigError(
            "export.length_penalty=auto picks the alpha by validation chrF, measured only on real text "
            "(data=parallel_text): give a number, e.g. export.length_penalty=0.6"
        )
    clip = cfg["trainer"].get("clip_norm")
    if clip is not None and clip <= 0:
        raise ConfigError(f"trainer.clip_norm={clip!r} must be > 0 (or null to turn clipping off)")
