"""A config key's value rule stated on its dataclass field, beside its type and default.

OmegaConf (2.3) refuses `Literal[...]` annotations, so a key's choices or range travel in the field's
metadata: `epochs: int = ruled(6, at_least(1))`. A config dataclass's `__post_init__` calls `check_rules`,
so building the typed object (`OmegaConf.to_object(cfg.trainer)`, or `TrainerConfig(...)` in a test) is
the check: a wrong value fails in one line naming the key. Imports nothing heavy: the config tree imports
it before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from tx_keras.user_error import ConfigError

# value -> what is wrong with it (a phrase that follows "key=value"), or None when it is allowed.
Rule = Callable[[Any], "str | None"]
_RULE = "rule"  # the metadata key


def ruled(default: Any = dataclasses.MISSING, rule: Rule | None = None, *, factory: Any = None) -> Any:
    """A dataclass field with `default` (or a `factory` for a list) whose values `rule` checks."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={_RULE: rule})
    return dataclasses.field(default=default, metadata={_RULE: rule})


def one_of(*allowed: Any) -> Rule:
    """One of `allowed`; the rule keeps them as `.choices` for the code that lists them."""

    def rule(value: Any) -> str | None:
        # `True == 1`: a bool is only one of the bools
        if any(value == choice and isinstance(value, bool) == isinstance(choice, bool) for choice in allowed):
            return None
        return f"is not allowed; choose one of: {', '.join(map(str, allowed))}"

    rule.choices = allowed  # type: ignore[attr-defined]
    return rule


def at_least(low: float) -> Rule:
    return lambda value: None if value >= low else f"must be >= {low:g}"


def between(low: int, high: int, off: str = "") -> Rule:
    """A whole number in [low, high] for a key that sizes something (a count, a length, a width): `high`
    is far above any real run's value, and stops a mistyped huge one (10**20 training pairs) here, in one
    line, instead of as an allocation or an int64 overflow once NumPy or TensorFlow meets it. `off` says
    what null means for a key that may be null (e.g. "for no limit")."""
    null = f" (or null {off})" if off else ""

    def rule(value: int) -> str | None:
        if value < low:
            return f"must be >= {low}{null}"
        return None if value <= high else f"must be <= {high}{null}"

    return rule


def above(low: float, off: str = "") -> Rule:
    """> `low`; `off` says what null means for a key that may be null (e.g. "for no time limit")."""
    return lambda value: None if value > low else f"must be > {low:g}" + (f" (or null {off})" if off else "")


def fraction(value: float) -> str | None:
    """A share of something that cannot be all of it (dropout, label smoothing)."""
    return None if 0.0 <= value < 1.0 else "must be in [0, 1)"


def share(value: float) -> str | None:
    """A share of something, all of it allowed."""
    return None if 0.0 <= value <= 1.0 else "must be in [0, 1]"


def seed_range(value: int) -> str | None:
    """A seed NumPy's global generator takes (keras.utils.set_random_seed seeds it): a larger one would
    pass the config and fail with a traceback once TensorFlow runs."""
    return None if 0 <= value < 2**32 else "must be in [0, 2**32 - 1]"


def or_null(rule: Rule) -> Rule:
    """`rule` for a key whose null means "off"."""
    return lambda value: None if value is None else rule(value)


def auto_or_count(high: int, null: bool = False) -> Rule:
    """auto, or a whole number in [1, high] (or null, where the key's null means "off")."""
    choices = "auto, null or a whole number >= 1" if null else "auto or a whole number >= 1"

    def rule(value: Any) -> str | None:
        if value == "auto" or (null and value is None):
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return None if value <= high else f"must be <= {high}"
        return f"is not allowed; choose {choices}"

    return rule


def choices_of(config: type, key: str) -> tuple[Any, ...]:
    """The values a `one_of` field allows, for code that lists or checks them."""
    [found] = [field for field in dataclasses.fields(config) if field.name == key]
    return found.metadata[_RULE].choices


def check_rules(config: Any, group: str) -> None:
    """Raise `ConfigError` for the first field of `config` whose value its rule refuses, as
    `group.key=value must be ...` or `group.key=value is not allowed; choose ...` (no group: the run's own
    top-level keys)."""
    for field in dataclasses.fields(config):
        rule = field.metadata.get(_RULE)
        value = getattr(config, field.name)
        if isinstance(value, float) and not math.isfinite(value):  # no key has a use for NaN or infinity
            problem = "must be a finite number" + (" (or null)" if field.default is None else "")
        else:
            problem = rule(value) if rule is not None else None
        if problem:
            key = f"{group}.{field.name}" if group else field.name
            raise ConfigError(f"{key}={value!r} {problem}")
