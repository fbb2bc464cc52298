"""Checks a composed config's values before anything is built: a mistake fails in one line, not minutes later.

The split with the schemas: every group's keys, types and defaults are dataclasses in Hydra's ConfigStore
(conf/__init__.py), so Hydra itself refuses an unknown key or a wrong type while composing. What a type
cannot say is here, in one place: value ranges and choices (`_VALUES`, one rule per key), the rules
between knobs of a group and between groups (`check_config`), and a user's own layer class, which only
importing it can check (`check_components`). The data group's value rules stay with its task families
(tx_keras/data/task_config.py): which keys exist depends on `data.name`.

`check_config` imports no TensorFlow: `tx-train` runs it once per job before TensorFlow starts (seconds
saved on every typo); `check_components` runs once after start-up, before the model is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from omegaconf import MissingMandatoryValue, OmegaConf

from tx_keras.components import BUILTINS, ComponentError, is_import_path, position_classes, resolve
from tx_keras.data.batching import BATCHING
from tx_keras.data.task_config import task_config
from tx_keras.export.export_config import ExportConfig
from tx_keras.models.model_config import ATTENTION_KINDS, FIELDS, ModelConfig
from tx_keras.norm_placement import NORM_MODES
from tx_keras.runtime.compiled_step import step_is_compiled
from tx_keras.runtime.keras_backend import BACKENDS, missing_backend
from tx_keras.training.choices import DISTRIBUTIONS, PRECISIONS, SCHEDULES
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.process_group import ProcessGroup
from tx_keras.training.trainer_config import TrainerConfig
from tx_keras.user_error import ConfigError, UserError

# The summary metrics a run can return to a sweeper.
OBJECTIVES = tuple(
    f"{split}_{metric}"
    for split in ("validation", "test")
    for metric in ("exact_match", "accuracy", "loss", "bleu", "chrf")  # bleu, chrf: real-text tasks only
)


Rule = Callable[[Any], "str | None"]


def _one_of(*allowed: Any) -> Rule:
    return lambda value: None if value in allowed else f"choose one of: {', '.join(map(str, allowed))}"


def _at_least(low: float) -> Rule:
    return lambda value: None if value >= low else f"must be >= {low}"


def _or_null(rule: Rule) -> Rule:
    """`rule` for a key whose null means "off"."""
    return lambda value: None if value is None else rule(value)


def _auto_or_count(null: bool) -> Rule:
    """auto or a whole number >= 1 (null too, where the key's null means "off": checked by `_or_null`)."""
    choices = "auto, null or a whole number >= 1" if null else "auto or a whole number >= 1"

    def rule(value: Any) -> str | None:
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return None
        return f"choose {choices}"

    return rule


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
    return (
        None
        if len(value) and min(value) >= 0
        else "must be a non-empty list of numbers >= 0, e.g. [0.6,1.0,1.4]"
    )


def _component(kind: str) -> Rule:
    """A built-in name, or a user's import path (imported by `check_components`); anything else is a typo."""

    def problem(name: str) -> str | None:
        if name in BUILTINS[kind] or is_import_path(kind, name):
            return None
        try:
            resolve(kind, name)  # neither: raises its one line without importing anything
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

# The value rule of every key that has one; the key's type is its schema's.
_VALUES: dict[str, Rule] = {
    "seed": _at_least(0),
    "model.num_encoder_layers": _at_least(1),
    "model.num_decoder_layers": _at_least(1),
    "model.d_model": _at_least(1),
    "model.num_heads": _at_least(1),
    "model.dff": _at_least(1),
    "model.dropout": _fraction,
    "model.norm": _one_of(*NORM_MODES),
    "model.activation": _one_of("relu", "gelu", "silu", "tanh"),
    "model.attention": _one_of(*ATTENTION_KINDS),
    **{f"model.{knob}": _component(kind) for knob, kind in _COMPONENT_KINDS.items()},
    "trainer.backend": lambda value: _one_of(*BACKENDS)(value) or missing_backend(value),
    "trainer.distribution": _one_of(*DISTRIBUTIONS),
    "trainer.devices": _or_null(_at_least(1)),
    "trainer.num_processes": _or_null(_at_least(1)),
    "trainer.process_id": _or_null(_at_least(0)),
    "trainer.epochs": _at_least(1),
    "trainer.max_train_minutes": _or_null(
        lambda value: None if value > 0 else "must be > 0 (or null for no time limit)"
    ),
    "trainer.max_steps": _or_null(_at_least(1)),
    "trainer.batch_size": _at_least(1),
    "trainer.batching": _one_of(*BATCHING),
    "trainer.shape_classes": _or_null(_auto_or_count(null=True)),
    "trainer.schedule": _one_of(*SCHEDULES),
    "trainer.cooldown": _share,
    "trainer.warmup_steps": _at_least(0),  # >= 1 for noam: checked below
    "trainer.lr_scale": _at_least(1e-12),
    "trainer.learning_rate": _at_least(1e-12),
    "trainer.label_smoothing": _fraction,
    "trainer.clip_norm": _or_null(
        lambda value: None if value > 0 else "must be > 0 (or null to turn clipping off)"
    ),
    "trainer.jit_compile": _one_of(True, False, "auto"),
    "trainer.precision": _one_of(*PRECISIONS),
    "trainer.step_parts": _auto_or_count(null=False),
    "trainer.checkpoint_every": _at_least(0),
    "trainer.checkpoint_every_minutes": _or_null(
        lambda value: None if value > 0 else "must be > 0 (or null for no time-based checkpoints)"
    ),
    "trainer.objective": _one_of(*OBJECTIVES),
    "trainer.early_stopping.patience": _or_null(_at_least(1)),
    "trainer.early_stopping.monitor": _one_of(
        "val_exact_match", "val_loss", "val_accuracy", "loss", "accuracy"
    ),
    "trainer.early_stopping.min_delta": _at_least(0),
    "logging.loss_every_steps": _at_least(0),
    "logging.probes": _at_least(0),
    "logging.attention_maps": _one_of("auto", "every", "first_last", "off"),
    "logging.attention_tensors_mb": _at_least(0),
    "logging.diagnostics_every": _at_least(0),
    "logging.verbose": _one_of(0, 1, 2),
    "logging.progress_every_s": _at_least(1),
    "export.beam_width": _at_least(1),
    "export.length_penalty": _length_penalty,
    "export.length_penalty_grid": _penalty_grid,
    "export.attention": _one_of("mean", "heads"),
}
# The groups whose keys one schema lists (the data group's depend on data.name: task_config checks them).
_SCHEMAS: dict[str, Mapping] = {
    group: OmegaConf.structured(schema)
    for group, schema in {
        "model": ModelConfig,
        "trainer": TrainerConfig,
        "logging": LoggingConfig,
        "export": ExportConfig,
    }.items()
}
assert {key.removeprefix("model.") for key in _VALUES if key.startswith("model.")} <= set(FIELDS)


def _lookup(cfg: Mapping, dotted: str) -> Any:
    node: Any = cfg
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:  # `~key` on the command line
            raise ConfigError(f"{dotted} is missing from the config")
        try:
            node = node[part]
        except MissingMandatoryValue:  # `???` in a YAML file: a value the user must give
            raise ConfigError(
                f"{dotted} is required: set it on the command line, e.g. {dotted}=..."
            ) from None
    return node


def _check_keys(group: str, node: Mapping, schema: Mapping) -> None:
    """Every key of a group is its schema's: only `+trainer.x=...` gets past Hydra's own check."""
    noun = "knob" if group == "model" else "key"  # the model's keys are its knobs everywhere else
    for key, value in node.items():
        if key not in schema:
            raise ConfigError(
                f"{group}.{key} is not a {group.split('.')[0]} {noun}; the {noun}s: {', '.join(schema)}"
            )
        if isinstance(value, Mapping) and isinstance(schema[key], Mapping):
            _check_keys(f"{group}.{key}", value, schema[key])


def _check_model(model: Mapping) -> None:
    """The rules between model knobs."""
    d_model, heads = model["d_model"], model["num_heads"]
    if d_model % heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0 and h <= 64]
        raise ConfigError(
            f"model.num_heads={heads} does not divide model.d_model={d_model}; "
            f"choose num_heads in {', '.join(map(str, divisors))}"
        )


def _check_distribution(trainer: Mapping) -> None:
    """The distribution keys together: where the processes come from, and what each engine can run."""
    keys = ("devices", "num_processes", "process_id", "coordinator")
    given = [key for key in keys if trainer[key] is not None]
    if trainer["distribution"] == "none" and given:
        raise ConfigError(
            f"trainer.{given[0]}={trainer[given[0]]!r} needs trainer.distribution=data_parallel"
        )
    try:
        group = ProcessGroup.of(trainer)  # the keys, else the launcher's environment
    except UserError as error:
        raise ConfigError(str(error)) from None
    if group.is_multi_process and trainer["backend"] != "jax":
        raise ConfigError(
            f"{group.count} processes with trainer.distribution=data_parallel need trainer.backend=jax: "
            "Keras 3's fit fails under TensorFlow's MultiWorkerMirroredStrategy (keras-team/keras#20585)"
        )
    clocked = [key for key in ("max_train_minutes", "checkpoint_every_minutes") if trainer[key] is not None]
    if group.is_multi_process and clocked:
        raise ConfigError(
            f"trainer.{clocked[0]}={trainer[clocked[0]]} is decided by each process's own clock, and "
            "several processes must stop and checkpoint at the same step; use epochs or max_steps, and "
            "checkpoint_every"
        )
    if group.is_multi_process and trainer["batching"] == "bucket":
        raise ConfigError(
            "trainer.batching=bucket varies the rows of a batch, which several processes cannot split "
            "evenly; use trainer.batching=fixed with several processes"
        )


def _check_step_parts(trainer: Mapping) -> None:
    """Row parts (models/row_parts_step.py) cut TensorFlow's graph step of one replica only."""
    parts = trainer.get("step_parts")
    if parts in ("auto", 1):
        return
    if step_is_compiled(trainer):
        setting = "backend=jax" if trainer["backend"] == "jax" else "jit_compile=true"
        raise ConfigError(
            f"trainer.step_parts={parts} with trainer.{setting}: a compiled step is scheduled by XLA, "
            "not cut into parts; use step_parts=auto or 1, or TensorFlow's graph step"
        )
    if trainer["distribution"] != "none":
        raise ConfigError(
            f"trainer.step_parts={parts} with trainer.distribution={trainer['distribution']}: the replicas "
            "already run side by side; use step_parts=auto or 1"
        )


def check_config(cfg: Mapping) -> None:
    """Raise `ConfigError` naming the key, the value and what is allowed, for the first problem found.

    Imports nothing (a user's own layer classes wait for `check_components`), so it runs before
    TensorFlow starts.
    """
    for key, rule in _VALUES.items():
        value = _lookup(cfg, key)
        problem = rule(value)
        if problem:
            raise ConfigError(
                f"{key}={value!r} {problem}"
                if problem.startswith(("must", "needs"))
                else f"{key}={value!r} is not allowed; {problem}"
            )
    for group, schema in _SCHEMAS.items():
        _check_keys(group, cfg[group], schema)
    _check_model(cfg["model"])
    trainer, data = cfg["trainer"], cfg["data"]
    if trainer["schedule"] == "noam" and trainer["warmup_steps"] < 1:
        raise ConfigError(
            f"trainer.warmup_steps={trainer['warmup_steps']} must be >= 1 with trainer.schedule=noam "
            "(warm-up 0 needs trainer.schedule=constant)"
        )
    if trainer["backend"] == "jax" and trainer["jit_compile"] is False:
        raise ConfigError(
            "trainer.jit_compile=false with trainer.backend=jax: JAX would run every op of every step "
            "uncompiled (~50x slower); use auto or true (JAX always compiles), or backend=tensorflow"
        )
    _check_step_parts(trainer)
    tokens = trainer["batch_tokens"]
    if tokens is not None and (tokens < 1 or trainer["batching"] != "bucket"):
        raise ConfigError(f"trainer.batch_tokens={tokens} needs trainer.batching=bucket and a value >= 1")
    classes = trainer.get("shape_classes")
    classes = None if classes == "auto" else classes  # auto: chosen per run, never refused
    if classes is not None and trainer["batching"] != "bucket":
        raise ConfigError(f"trainer.shape_classes={classes} needs trainer.batching=bucket (or null)")
    if classes is not None and data.get("stream"):
        raise ConfigError(
            f"trainer.shape_classes={classes} with data.stream=true: the streamed corpus buckets by its own "
            "widths; use trainer.shape_classes=null"
        )
    _check_distribution(trainer)
    try:  # the task's own keys and value rules (its name included)
        task_config(data)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if data["name"] != "parallel_text" and trainer["objective"].endswith(("bleu", "chrf")):
        raise ConfigError(
            f"trainer.objective={trainer['objective']} is measured only on real text (data=parallel_text)"
        )
    if cfg["export"]["length_penalty"] == "auto" and data["name"] != "parallel_text":
        raise ConfigError(
            "export.length_penalty=auto picks the alpha by validation chrF, measured only on real text "
            "(data=parallel_text): give a number, e.g. export.length_penalty=0.6"
        )


def check_components(model: Mapping) -> None:
    """The model rules only an import can check: a user's own layer classes exist and are Keras layers,
    and a rotating position encoding gets an even d_k. Imports Keras: run after TensorFlow starts."""
    for knob, kind in _COMPONENT_KINDS.items():
        if is_import_path(kind, model[knob]):
            try:
                resolve(kind, model[knob])
            except ComponentError as error:
                raise ConfigError(f"model.{knob}={model[knob]!r} is not allowed; {error}") from None
    key_dim = ModelConfig(**model).key_dim
    if position_classes(model["positions"])[1] is not None and key_dim % 2:
        raise ConfigError(
            f"model.positions={model['positions']} rotates pairs of features: d_model / num_heads = "
            f"{key_dim} must be even"
        )
