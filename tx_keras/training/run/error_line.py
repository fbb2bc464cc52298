"""Hydra's composition errors as one line a user can act on: what is wrong and the closest valid names."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from tx_keras.run_folder.flatten import flatten

_UNKNOWN_KEY = re.compile(r"Could not override '([^']+)'")
_MISSING_VALUE = re.compile(r"Missing mandatory value: ([\w.]+)")
# A value the schema (a dataclass in the ConfigStore, conf/__init__.py) cannot convert to the key's type.
_WRONG_TYPE = re.compile(
    r"Value '(.*)' (?:of type '\w+' could not be converted to (\w+)|is not a valid (\w+)"
    r"|of type '\w+' is incompatible with type hint '(?:Union\[)?([\w, ]+)\]?')"
    r".*\n\s*full_key: ([\w.]+)"
)
_TYPE_NAMES = {"Integer": "int", "Float": "float", "String": "str"}
# A scalar given where the schema has a list.
_NOT_A_LIST = re.compile(r"override ([\w.]+)=(.*)\n.*is not a ListConfig, list or tuple")
# `~key` on a key of a schema, which every config of the group must have.
_NO_DELETION = re.compile(r"does not support deletion\s*\n\s*full_key: ([\w.]+)")
_AVAILABLE = re.compile(r"Available options in '([^']+)':\s*((?:\n\t\S+)+)")


def _closest(wanted: str, options: list[str]) -> str:
    matches = difflib.get_close_matches(wanted, options, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(matches)}?" if matches else ""


def error_line(message: str, config: Mapping | None = None) -> str:
    """One line for a Hydra/OmegaConf error message; `config` (the default composed config) feeds the
    "did you mean" suggestions for unknown keys."""
    unknown = _UNKNOWN_KEY.search(message)
    if unknown:
        key = unknown.group(1)
        keys = list(flatten(config)) if config is not None else []
        return (
            f"{key} is not a config key{_closest(key, keys)} (to add a new key on purpose, write +{key}=...)"
        )
    missing_value = _MISSING_VALUE.search(message)
    if missing_value:  # a `???` in a config file, e.g. data.path of data=parallel_text
        key = missing_value.group(1)
        return f"{key} is required: set it on the command line, e.g. {key}=..."
    wrong_type = _WRONG_TYPE.search(message)
    if wrong_type:
        value, converted, valid, union, key = wrong_type.groups()
        expected = (
            _TYPE_NAMES.get(converted, converted) if converted else valid or " or ".join(union.split(", "))
        )
        return f"{key}={value!r} has the wrong type: expected {expected}"
    not_a_list = _NOT_A_LIST.search(message)
    if not_a_list:
        return f"{not_a_list.group(1)}={not_a_list.group(2)} has the wrong type: expected list"
    no_deletion = _NO_DELETION.search(message)
    if no_deletion:
        key = no_deletion.group(1)
        return f"{key} cannot be removed: the schema gives it a value; set one instead, e.g. {key}=..."
    available = _AVAILABLE.search(message)
    if available:
        group, options = available.group(1), available.group(2).split()
        first = message.strip().splitlines()[0]
        missing = re.search(r"Could not find '([^']+)'", first)
        wanted = missing.group(1).split("/")[-1] if missing else ""
        return (
            f"{group}={wanted} is not an option of {group}/{_closest(wanted, options)} "
            f"(choose one of: {', '.join(options)})"
        )
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return "; ".join(line for line in lines if not line.startswith(("Set the environment", "provider=")))
