"""Nested configs as dotted keys: `{"trainer": {"epochs": 4}}` -> `{"trainer.epochs": 4}`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every leaf of `config` under its dotted path (prefixed by `prefix`); nested groups
    (`trainer.early_stopping`) become dotted keys too, lists stay values."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        flat.update(flatten(value, f"{path}.") if isinstance(value, Mapping) else {path: value})
    return flat
