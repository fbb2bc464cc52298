"""Optuna's parameter importances of a finished or running Optuna sweep (a grid sweep's too), rebuilt from
its run folders.

An Optuna sweep here keeps its study in memory (`storage: null`): the run folders are its only record. So
the study is rebuilt: the searched space from the sweep's config, parsed by the Optuna sweeper plugin's own
parser (the same distributions it sampled from), one trial per job that completed with a finite objective
(`trainer.objective` of its summary), its values read back from the job's overrides.

The importances are Optuna's mean decrease in impurity (a seeded random forest over the trials): Optuna
2.10, the version the sweeper plugin pins, has fANOVA as its default, but its fANOVA fails under NumPy 2
(it stores a tree's 1x1 leaf value as a scalar)."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import yaml
from hydra.errors import HydraException
from hydra_plugins.hydra_optuna_sweeper._impl import create_params_from_overrides
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    IntLogUniformDistribution,
    IntUniformDistribution,
)
from optuna.exceptions import ExperimentalWarning
from optuna.importance import MeanDecreaseImpurityImportanceEvaluator, get_param_importances

from tx_keras.comparison.knob_value import shown_value
from tx_keras.comparison.sweep_runs import RunRecord, collect_runs
from tx_keras.comparison.table import as_text, lower_is_better
from tx_keras.run_folder.summary import summary_or_none
from tx_keras.user_error import UserError

IMPORTANCE_SEED = 0  # the forest's seed: the same folder gives the same importances
MULTIRUN_CONFIG = "multirun.yaml"  # the basic sweeper's record of the whole sweep's config
JOB_CONFIG = Path(".hydra") / "hydra.yaml"  # every job's copy of Hydra's config (the Optuna sweeper's only)


@dataclass(frozen=True)
class SearchSpace:
    """What the sweeper searched: each param's Optuna distribution, and which way the objective goes
    (None where the sweep does not say: a grid sweep)."""

    distributions: dict[str, BaseDistribution]
    direction: str | None
    source: Path


@dataclass(frozen=True)
class Importances:
    """The importances (highest first), the trials they came from and the best of them."""

    importances: dict[str, float]
    objective: str
    direction: str
    used: int
    skipped: Counter[str]  # why a job is not a trial -> how many
    constant: dict[str, str]  # a searched param with one value in every trial used -> that value
    best_run: RunRecord
    best_value: float
    best_params: dict[str, str]


def _hydra_config(sweep_dir: Path, runs: list[RunRecord]) -> tuple[dict[str, Any], Path]:
    """Hydra's config of the sweep: multirun.yaml where the sweeper wrote one, else a job's own copy (the
    Optuna sweeper writes no multirun.yaml; every job's .hydra/hydra.yaml holds the same sweeper block)."""
    candidates = [sweep_dir / MULTIRUN_CONFIG, *(run.path / JOB_CONFIG for run in runs)]
    for path in candidates:
        if path.is_file():
            try:
                config = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
                raise UserError(f"cannot read {path} ({type(error).__name__})") from None
            if isinstance(config, dict) and isinstance(config.get("hydra"), dict):
                return config["hydra"], path
    raise UserError(f"{sweep_dir} has no Hydra config (no {MULTIRUN_CONFIG}, no job's {JOB_CONFIG})")


def searched_space(sweep_dir: Path, runs: list[RunRecord]) -> SearchSpace:
    """The sweep's params as the sweeper turned them into Optuna distributions. With multirun.yaml the
    command line's overrides count too, as the sweeper takes them (a swept value adds a param, a fixed value
    removes one); a job's copy holds the job's own values there, so only its sweeper params are read."""
    hydra, source = _hydra_config(sweep_dir, runs)
    sweeper = hydra.get("sweeper") or {}
    params = sweeper.get("params") or {}
    arguments = [f"{key!s}={value}" for key, value in params.items()]
    if source.name == MULTIRUN_CONFIG:
        arguments += list((hydra.get("overrides") or {}).get("task") or [])
    try:
        distributions, fixed = create_params_from_overrides(arguments)
    except (HydraException, NotImplementedError, AssertionError) as error:
        raise UserError(f"cannot read the searched space of {source}: {error}") from None
    for name in fixed:
        distributions.pop(name, None)
    if not distributions:
        raise UserError(f"{source} searches no parameter (hydra.sweeper.params holds no interval or choice)")
    direction = sweeper.get("direction")
    if direction is not None and not isinstance(direction, str):
        raise UserError(f"{source} optimises several objectives ({direction}): importances need one")
    return SearchSpace(distributions, direction, source)


def _objective(sweep_dir: Path, runs: list[RunRecord]) -> str:
    """The objective the jobs returned to the sweeper: trainer.objective of their summaries."""
    summaries = [summary_or_none(run.path) or {} for run in runs]
    named = {((summary.get("config") or {}).get("trainer") or {}).get("objective") for summary in summaries}
    objectives = sorted(name for name in named if isinstance(name, str))
    if not objectives:
        raise UserError(f"no job of {sweep_dir} has finished: importances need at least 2 usable trials")
    if len(objectives) > 1:
        raise UserError(f"the jobs of {sweep_dir} return different objectives ({', '.join(objectives)})")
    return objectives[0]


def _skip_reason(run: RunRecord, objective: str, names: list[str]) -> str | None:
    """Why a job gives no trial, None when it gives one."""
    if run.status != "completed":
        return "not finished" if run.status == "unfinished" else run.status
    if not math.isfinite(run.metrics.get(objective, math.nan)):
        return f"no finite {objective}"
    if any(name not in run.overrides for name in names):
        return "outside the searched space"
    return None


def _internal(distribution: BaseDistribution, text: str) -> Any:
    """A job's override value as the trial held it: the sweeper wrote `name={value}`, so a choice is the
    one whose text it is, a number is parsed as the distribution's type."""
    if isinstance(distribution, CategoricalDistribution):
        matches = [choice for choice in distribution.choices if str(choice) == text]
        if not matches:
            raise ValueError(f"{text} is not a choice")
        return matches[0]
    if isinstance(distribution, IntUniformDistribution | IntLogUniformDistribution):
        return int(text)
    return float(text)


@contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Optuna's INFO line per study and its warnings that create_trial is experimental stay off stderr."""
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(verbosity)


def param_importances(sweep_dir: Path) -> Importances:
    """The importances of the sweep's searched params over its completed trials; UserError in one line
    when the folder is no sweep of tx-train runs or fewer than 2 trials are usable."""
    runs = collect_runs(sweep_dir)
    if not runs:
        raise UserError(f"{sweep_dir} holds no tx-train runs")
    space = searched_space(sweep_dir, runs)
    objective = _objective(sweep_dir, runs)
    direction = space.direction or ("minimize" if lower_is_better(objective) else "maximize")
    names = list(space.distributions)
    reasons = {run.name: _skip_reason(run, objective, names) for run in runs}
    skipped = Counter(reason for reason in reasons.values() if reason)
    usable = [run for run in runs if not reasons[run.name]]
    # A param with one value in every trial has no importance; a value fixed on the command line may not
    # even lie in the searched space (a job's copy of the config does not tell it apart).
    constant = {
        name: usable[0].overrides[name]
        for name in names
        if usable and len({run.overrides[name] for run in usable}) == 1
    }
    distributions = {name: space.distributions[name] for name in names if name not in constant}
    with _quiet_optuna():
        study = optuna.create_study(direction=direction)
        used = 0
        for run in usable:
            try:
                params = {name: _internal(dist, run.overrides[name]) for name, dist in distributions.items()}
                trial = optuna.trial.create_trial(
                    params=params,
                    distributions=distributions,
                    value=run.metrics[objective],
                    user_attrs={"job": run.name},
                )
            except ValueError:  # a value outside the distribution: the space changed between runs
                skipped["outside the searched space"] += 1
                continue
            study.add_trial(trial)
            used += 1
        if used < 2:
            counts = "".join(f", {count} {reason}" for reason, count in sorted(skipped.items()))
            raise UserError(
                f"importances need at least 2 usable trials; {sweep_dir} has {used} of {len(runs)} "
                f"jobs{counts}"
            )
        if not distributions:
            raise UserError(f"every searched param has one value in the {used} usable trials of {sweep_dir}")
        evaluator = MeanDecreaseImpurityImportanceEvaluator(seed=IMPORTANCE_SEED)
        importances = dict(get_param_importances(study, evaluator=evaluator))
    best = next(run for run in usable if run.name == study.best_trial.user_attrs["job"])
    return Importances(
        importances=importances,
        objective=objective,
        direction=direction,
        used=used,
        skipped=skipped,
        constant=constant,
        best_run=best,
        best_value=study.best_value,
        best_params={name: best.overrides[name] for name in names},
    )


def importance_text(result: Importances) -> str:
    """The importances as a table, highest first, with the best trial's value of each param beside it."""
    best = result.best_params
    rows = [[name, f"{value:.4f}", shown_value(best[name])] for name, value in result.importances.items()]
    rows += [[name, "-", shown_value(value)] for name, value in result.constant.items()]
    table = as_text(["param", "importance", "best trial"], rows)
    skipped = sum(result.skipped.values())
    reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(result.skipped.items()))
    lines = [
        f"{result.used} trials used, {skipped} skipped" + (f" ({reasons})" if reasons else ""),
        f"best trial: {result.best_run.path} ({result.objective} {result.best_value:.4f}, "
        f"{result.direction})",
        "importance: each param's share of Optuna's mean decrease in impurity (a random forest of the "
        f"trials, seed {IMPORTANCE_SEED})",
    ]
    if not any(result.importances.values()):
        lines.append(f"every trial used has the same {result.objective}: no param explains a difference")
    if result.constant:
        lines.append("-: one value in every trial used, so no importance")
    return table + "\n".join(lines) + "\n"
