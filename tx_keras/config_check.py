"""Checks a composed config before anything is built, so a typo fails in one line, not minutes later."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tx_keras.data import TASKS
from tx_keras.layers import ATTENTION_IMPLEMENTATIONS, NORM_MODES, POSITION_KINDS
from tx_keras.training.precision import PRECISIONS
from tx_keras.user_error import UserError

# The summary metrics a run can return to a sweeper.
OBJECTIVES = tuple(
    f"{split}_{metric}" for split in ("validation", "test") for metric in ("exact_match", "accuracy", "loss")
)


class ConfigError(UserError):
    """A user's configuration mistake: printed as one line, never as a traceback."""


def _one_of(*allowed: Any) -> Callable[[Any], str | None]:
    return lambda value: None if value in allowed else f"choose one of: {', '.join(map(str, allowed))}"


def _at_least(low: float) -> Callable[[Any], str | None]:
    return lambda value: None if value >= low else f"must be >= {low}"


def _fraction(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else "must be in [0, 1)"


# Every key the run reads: key -> (accepted types, value rule or None).
_RULES: dict[str, tuple[tuple[type, ...], Callable[[Any], str | None] | None]] = {
    "seed": ((int,), _at_least(0)),
    "model.num_encoder_layers": ((int,), _at_least(1)),
    "model.num_decoder_layers": ((int,), _at_least(1)),
    "model.d_model": ((int,), _at_least(1)),
    "model.num_heads": ((int,), _at_least(1)),
    "model.dff": ((int,), _at_least(1)),
    "model.dropout": ((float, int), _fraction),
    "model.residual": ((bool,), None),
    "model.norm": ((str,), _one_of(*NORM_MODES)),
    "model.ffn": ((bool,), None),
    "model.activation": ((str,), _one_of("relu", "gelu", "silu", "tanh")),
    "model.attention_impl": ((str,), _one_of(*ATTENTION_IMPLEMENTATIONS)),
    "model.positions": ((str,), _one_of(*POSITION_KINDS)),
    "model.fused_qkv": ((bool,), None),
    "data.name": ((str,), _one_of(*TASKS)),
    "data.num_train": ((int,), _at_least(1)),
    "data.num_validation": ((int,), _at_least(1)),
    "data.num_test": ((int,), _at_least(1)),
    "trainer.epochs": ((int,), _at_least(1)),
    "trainer.batch_size": ((int,), _at_least(1)),
    "trainer.warmup_steps": ((int,), _at_least(1)),
    "trainer.lr_scale": ((float, int), _at_least(1e-12)),
    "trainer.label_smoothing": ((float, int), _fraction),
    "trainer.clip_norm": ((float, int, type(None)), None),
    "trainer.deterministic": ((bool,), None),
    "trainer.jit_compile": ((bool, str), _one_of(True, False, "auto")),
    "trainer.precision": ((str,), _one_of(*PRECISIONS)),
    "trainer.checkpoint_every": ((int,), _at_least(0)),
    "resume": ((str, type(None)), None),
    "trainer.objective": ((str,), _one_of(*OBJECTIVES)),
    "export.enabled": ((bool,), None),
    "export.beam_width": ((int,), _at_least(1)),
    "export.length_penalty": ((float, int), _at_least(0)),
    "export.attention": ((str,), _one_of("mean", "heads")),
}


# Keys only some tasks have (copy, reverse, sort): checked when present.
_TASK_RULES: dict[str, tuple[tuple[type, ...], Callable[[Any], str | None] | None]] = {
    "data.vocab_size": ((int,), _at_least(1)),  # symbols, besides the 4 special tokens
    "data.length": ((int,), _at_least(1)),
    "data.min_length": ((int,), _at_least(1)),
}


def _lookup(cfg: Mapping, dotted: str) -> tuple[bool, Any]:
    node: Any = cfg
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def check_config(cfg: Mapping) -> None:
    """Raise `ConfigError` naming the key, the value and what is allowed, for the first problem found."""
    for key, (types, rule) in {**_RULES, **_TASK_RULES}.items():
        present, value = _lookup(cfg, key)
        if not present and key in _TASK_RULES:
            continue
        if not present:
            raise ConfigError(f"{key} is missing from the config")
        # bool is an int in Python: `model.d_model=true` must still be refused.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ConfigError(f"{key}={value!r} has the wrong type: expected {names}")
        problem = rule(value) if rule else None
        if problem:
            raise ConfigError(
                f"{key}={value!r} {problem}"
                if problem.startswith("must")
                else f"{key}={value!r} is not allowed; {problem}"
            )
    d_model, heads = cfg["model"]["d_model"], cfg["model"]["num_heads"]
    if d_model % heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0 and h <= 64]
        raise ConfigError(
            f"model.num_heads={heads} does not divide model.d_model={d_model}; "
            f"choose num_heads in {', '.join(map(str, divisors))}"
        )
    data = cfg["data"]
    if "min_length" in data and "length" in data and data["min_length"] > data["length"]:
        raise ConfigError(f"data.min_length={data['min_length']} must be <= data.length={data['length']}")
    clip = cfg["trainer"].get("clip_norm")
    if clip is not None and clip <= 0:
        raise ConfigError(f"trainer.clip_norm={clip!r} must be > 0 (or null to turn clipping off)")
