"""Hydra's `.hydra/overrides.yaml`: the command-line overrides a run (or a sweep's job) was started with."""

from __future__ import annotations

from pathlib import Path

import yaml

from tx_keras.run_folder.run_folder_error import RunFolderError

OVERRIDES_PATH = Path(".hydra") / "overrides.yaml"


def override_key(override: str) -> str:
    """`+trainer.epochs=4` -> `trainer.epochs` (Hydra's `+`, `++` and `~` prefixes dropped)."""
    return override.split("=", 1)[0].lstrip("+~")


def read_overrides(run_dir: Path) -> list[str] | None:
    """The folder's overrides in command-line order, None when it has no such file (not started by Hydra).
    An unreadable file, or one that is not a list of strings, is a `RunFolderError`."""
    path = run_dir / OVERRIDES_PATH
    if not path.exists():
        return None
    try:
        overrides = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise RunFolderError(f"cannot read {path} ({type(error).__name__})") from None
    if not isinstance(overrides, list) or not all(isinstance(item, str) for item in overrides):
        raise RunFolderError(f"{path} is not a list of overrides")
    return overrides


def override_values(overrides: list[str]) -> dict[str, str]:
    """`key=value` overrides as key -> value (the value as typed); `~key` deletions are left out."""
    return dict((override_key(item), item.split("=", 1)[1]) for item in overrides if "=" in item)
