"""`seeds=N`: every setting of a sweep repeated over N training seeds on one data split.

A Hydra callback (conf/hydra/default.yaml) that, before the sweeper is built, turns `seeds=3` into what a
user would otherwise type by hand: `seed=B,B+1,B+2` (B: the run's `seed`, 0 by default) and, when the task
samples its split from the run seed (`data.seed: ${seed}`, every conf/data file), `data.seed=B`, so the seeds
differ in initialisation and batch order only. The axis goes into the command line's overrides, which the
basic sweeper takes after its own `params`: it is the innermost axis, so one setting's seeds are adjacent
jobs. `seeds=1` (the default) changes nothing, and a single run keeps its `seed` as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from tx_keras.user_error import UserError

_BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


class SeedAxisError(UserError):
    """`seeds` cannot be applied to this command, said in one line."""


def seed_count(config: DictConfig) -> int:
    """The validated `seeds` value: a whole number >= 1."""
    value = config.get("seeds", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SeedAxisError(f"seeds={value!r} must be a whole number >= 1 (e.g. seeds=3)")
    return value


def _key(override: str) -> str:
    return override.lstrip("+~").split("=", 1)[0]


def add_seed_axis(config: DictConfig) -> None:
    """Add the seed axis to the multirun `config` in place (nothing when seeds=1).

    Raises SeedAxisError when the sweeper is not the basic (grid) sweeper, or when the seed is swept
    already (a sweep file's `seed: 0,1,2`, or `seed=0,1` on the command line)."""
    count = seed_count(config)
    if count == 1:
        return
    sweeper = config.hydra.sweeper
    target = sweeper.get("_target_", "")
    if target != _BASIC_SWEEPER:
        raise SeedAxisError(
            f"seeds={count} repeats the settings of a grid sweep, but this sweep's sweeper "
            f"({target.rsplit('.', 1)[-1]}) chooses its own settings: rerun the setting it found with "
            f"-m seeds={count}"
        )
    params = sweeper.get("params") or {}
    if "seed" in params:
        raise SeedAxisError(
            f"this sweep already sweeps seed ({params['seed']}); drop seeds={count} or use seed=... instead"
        )
    task = list(config.hydra.overrides.task)
    parsed = OverridesParser.create().parse_overrides(task)
    for text, override in zip(task, parsed, strict=True):
        if _key(text) == "seed" and override.is_sweep_override():
            raise SeedAxisError(
                f"{text} sweeps the seed already; with seeds={count} give one base seed (seed=B runs "
                f"B..B+{count - 1})"
            )
    base = int(config.seed)
    axis = [f"seed={','.join(str(base + i) for i in range(count))}"]
    split_given = "data.seed" in params or any(_key(text) == "data.seed" for text in task)
    if not split_given and "seed" in config.data and OmegaConf.is_interpolation(config.data, "seed"):
        axis.insert(0, f"data.seed={config.data.seed}")  # the split of the base seed, for every seed
    with read_write(config.hydra), open_dict(config.hydra):
        config.hydra.overrides.task = [text for text in task if _key(text) != "seed"] + axis


def _refuse_for_a_single_run(config: DictConfig) -> None:
    count = seed_count(config)
    if count > 1 and not config.get("resume"):  # a resumed sweep job replays its seeds=N
        raise SeedAxisError(
            f"seeds={count} repeats every setting of a sweep: add sweep=NAME or -m "
            f"(a single run takes one seed, seed=...)"
        )


def _or_exit(apply: Callable[[DictConfig], None], config: DictConfig) -> None:
    """Hydra turns a callback's exception into a warning and goes on: a bad `seeds` would run the sweep
    without its seeds. So the error line is printed here and the command ends (exit 2), before any job."""
    try:
        apply(config)
    except SeedAxisError as error:
        print(f"tx-train: error: {error}", file=sys.stderr)
        sys.exit(2)


class SeedAxis(Callback):
    """`seeds=N` applied before the sweeper reads the command line; refused for a single run."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _or_exit(_refuse_for_a_single_run, config)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _or_exit(add_seed_axis, config)
