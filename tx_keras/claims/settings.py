"""A setting is a sweep job's knobs without its seed: the runs of one setting differ only by seed."""

from __future__ import annotations

from collections.abc import Mapping

Setting = tuple[tuple[str, str], ...]


def make_setting(knobs: Mapping[str, object]) -> Setting:
    """Knob -> value as written in the overrides (`model.num_heads=4` -> ("model.num_heads", "4")), sorted."""
    return tuple(sorted((key, str(value)) for key, value in knobs.items()))


def parse_value(text: str) -> bool | int | float | str:
    """An override's value as Hydra would read it: `true` -> True, `4` -> 4, `1e-2` -> 0.01, else the text."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def value_of(setting: Setting, knob: str) -> bool | int | float | str | None:
    """The parsed value of `knob` in `setting`, None if the setting does not set it."""
    for key, value in setting:
        if key == knob:
            return parse_value(value)
    return None


def select(settings: Mapping[Setting, object], wanted: Mapping[str, object]):
    """The entry whose setting has every `wanted` knob at that value (`0.01` matches `1e-2`), or None.

    More than one match means `wanted` does not pin a setting down: a bug in a rule, so it raises.
    """
    matches = [
        entry
        for setting, entry in settings.items()
        if all(value_of(setting, knob) == parse_value(str(value)) for knob, value in wanted.items())
    ]
    if len(matches) > 1:
        raise ValueError(f"{dict(wanted)} matches {len(matches)} settings, expected one")
    return matches[0] if matches else None


def _ordered(setting: Setting, knobs: tuple[str, ...]) -> list[tuple[str, str]]:
    order = {knob: i for i, knob in enumerate(knobs)}
    return sorted(setting, key=lambda pair: (order.get(pair[0], len(order)), pair[0]))


def label(setting: Setting, knobs: tuple[str, ...] = ()) -> str:
    """`attention=none, num_heads=4`: the last part of each knob's name, in `knobs` order first."""
    return ", ".join(f"{key.rsplit('.', 1)[-1]}={value}" for key, value in _ordered(setting, knobs))


def short_label(setting: Setting, knobs: tuple[str, ...] = ()) -> str:
    """`none / 4`: the values alone, in the same order as `label` (for crowded plot axes)."""
    return " / ".join(value for _, value in _ordered(setting, knobs))


def sort_key(setting: Setting, knobs: tuple[str, ...]) -> tuple:
    """Settings ordered knob by knob in `knobs` order, numbers numerically, then the other knobs."""
    ordered = [*knobs, *sorted({key for key, _ in setting} - set(knobs))]
    key = []
    for knob in ordered:
        value = value_of(setting, knob)
        key.append((0, float(value), "") if isinstance(value, int | float) else (1, 0.0, str(value)))
    return tuple(key)
