"""A package's public names imported on first use (PEP 562), so importing one light module of the package
does not import the heavy ones its `__init__` would otherwise name."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(package: str, **modules: tuple[str, ...]) -> tuple[Callable[[str], Any], list[str]]:
    """The module `__getattr__` and `__all__` of `package`: each keyword is a module of the package and
    its value the public names that module defines, so an `__init__` is one call naming each module once."""
    homes = {name: f"{package}.{module}" for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(homes[name]), name)

    return __getattr__, sorted(homes)
