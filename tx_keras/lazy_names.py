"""A package's public names imported on first use (PEP 562), so importing one light module of the package
does not import the heavy ones its `__init__` would otherwise name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `homes` maps each public name to the module defining it."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(homes[name]), name)

    return __getattr__
