"""Property-based tests of the config door (issue 65), with Hypothesis: random overrides of every group's
keys (wrong types, out-of-range numbers, unknown choices, NaN/inf, huge integers, unknown keys) are either
accepted or refused in one line that names the key, before anything trains.

In this process, as tx-train does it: Hydra composes (its schemas refuse unknown keys and wrong types, worded
by training/run/error_line.py), then the config check (training/run/config_check.py) reads every group through
its dataclass. One `tx-train` process checks a few sampled bad overrides end to end. A second property sets
every whole-number key of every task above any bound a size has (tx_keras/config_rules.py `between`). The
default run keeps forty examples of the first and twenty of the second; `pytest -m slow` 400 of each.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hydra import compose, initialize_config_module
from hydra.errors import HydraException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from tests.conftest import TINY, tx_train
from tx_keras.data.task_config import TASK_CONFIGS
from tx_keras.export.export_config import ExportConfig
from tx_keras.models.model_config import ModelConfig
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.run.config_check import check_components, check_config
from tx_keras.training.run.error_line import error_line
from tx_keras.training.run.run_config import RunConfig
from tx_keras.training.trainer_config import TrainerConfig
from tx_keras.user_error import ConfigError

settings.register_profile(
    "config-default",
    max_examples=40,
    deadline=None,
    database=None,  # each failure found becomes a fixed case instead
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile("config-slow", settings.get_profile("config-default"), max_examples=400)
DEFAULT, SLOW = settings.get_profile("config-default"), settings.get_profile("config-slow")


def _leaf_keys(group: str, schema: type) -> list[str]:
    """Every key of a group's dataclass, nested dataclasses (trainer.early_stopping.*) flattened."""
    keys = []
    for field in dataclasses.fields(schema):
        nested = field.default_factory
        if dataclasses.is_dataclass(nested):
            keys += _leaf_keys(f"{group}.{field.name}", nested)
        else:
            keys.append(f"{group}.{field.name}")
    return keys


def _data_keys() -> list[str]:
    """The data group's keys: its dataclass depends on data.name (task_config), so the composed default's."""
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        data = compose(config_name="config").data
    return [f"data.{key}" for key in OmegaConf.to_container(data)]


KEYS = sorted(
    _leaf_keys("model", ModelConfig)
    + _leaf_keys("trainer", TrainerConfig)
    + _leaf_keys("logging", LoggingConfig)
    + _leaf_keys("export", ExportConfig)
    + _data_keys()
    + ["seed"]
)

# Values a user might type, or mistype: wrong types, out-of-range and non-finite numbers, huge integers,
# unknown choices, lists and maps where scalars are, and Hydra's grammar's own odd corners.
_ODD_VALUES = st.sampled_from(
    [
        "nan",
        "inf",
        "-inf",
        "NaN",
        "1e999",
        "-1e999",
        "1e-999",
        str(10**30),
        str(-(10**30)),
        str(2**63),
        "-1",
        "0",
        "0.0",
        "-0.5",
        "1.5",
        "true",
        "false",
        "null",
        "abc",
        "''",
        "[]",
        "[1,2]",
        "{a: 1}",
        "???",
        "${model.d_model}",
        "${nowhere}",
        "auto",
        "full",
        "none",
        "jax",
        "0x10",
        "1_000",
    ]
)
_NUMBERS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
_WORDS = st.text(st.sampled_from("abcxyz_09."), min_size=1, max_size=10)
VALUES = st.one_of(_ODD_VALUES, _NUMBERS, _WORDS)


@st.composite
def overrides(draw) -> tuple[str, list[str]]:
    """(the key the override names, the overrides): a known key with an odd value, or an unknown key."""
    if draw(st.integers(0, 7)) == 0:
        group = draw(
            st.sampled_from(["model", "trainer", "logging", "export", "data", "trainer.early_stopping"])
        )
        key = f"{group}.{draw(st.text(st.sampled_from('qwz_'), min_size=1, max_size=6))}_x"
        plus = draw(st.sampled_from(["", "+"]))
        return key, [f"{plus}{key}={draw(VALUES)}"]
    key = draw(st.sampled_from(KEYS))
    return key, [f"{key}={draw(VALUES)}"]


@pytest.fixture(scope="module")
def compose_config():
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        default = compose(config_name="config")  # composed once: each Hydra error line's suggestions
        yield lambda *given: compose(config_name="config", overrides=list(given)) if given else default


def _answer(compose_config, given: list[str]) -> str | None:
    """None when tx-train would train this config; else the one error line it prints (as cli/train.py)."""
    try:
        cfg = compose_config(*given)
        run = check_config(cfg)
    except (HydraException, OmegaConfBaseException) as error:
        message = str(error) + (f"\n{error.__cause__}" if error.__cause__ else "")
        return error_line(message, compose_config())
    except ConfigError as error:
        return str(error)
    try:
        check_components(run.model)
    except ConfigError as error:
        return str(error)
    _assert_usable(run)
    return None


def _assert_usable(value, key: str = "") -> None:
    """An accepted config holds no NaN or infinity anywhere, and a run seed NumPy's global generator takes."""
    if dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            _assert_usable(getattr(value, field.name), f"{key}.{field.name}".lstrip("."))
    elif isinstance(value, float):
        assert math.isfinite(value), f"{key}={value} accepted"
    elif key == "seed" and isinstance(value, int):  # data.seed feeds default_rng, which takes any size
        assert 0 <= value < 2**32, f"{key}={value} accepted"


def _names(line: str, key: str) -> bool:
    """Whether the line names the key: its dotted name, or (for a nested key) its group and its leaf."""
    return key in line or (key.rsplit(".", 1)[-1] in line and key.split(".", 1)[0] in line)


def _check(compose_config, case: tuple[str, list[str]]) -> None:
    key, given = case
    line = _answer(compose_config, given)
    if line is None:
        return
    assert "\n" not in line.strip(), (given, line)
    assert _names(line, key), (given, line)


@DEFAULT
@given(case=overrides())
def test_any_override_is_accepted_or_refused_in_one_line_naming_the_key(compose_config, case):
    _check(compose_config, case)


@pytest.mark.slow
@SLOW
@given(case=overrides())
def test_any_override_is_accepted_or_refused_in_one_line_naming_the_key_slow(compose_config, case):
    _check(compose_config, case)


def _int_keys(group: str, schema: type) -> list[str]:
    """The keys of a group's dataclass that hold a whole number (a count, a size, a seed), nested ones
    flattened; a key that may also be a float (export.length_penalty) is a number, not a count."""
    keys = []
    for field in dataclasses.fields(schema):
        nested = field.default_factory
        if dataclasses.is_dataclass(nested):
            keys += _int_keys(f"{group}.{field.name}", nested)
        elif "int" in str(field.type) and "float" not in str(field.type):
            keys.append(f"{group}.{field.name}".lstrip("."))
    return keys


# data=<task> -> the overrides that choose it (a real corpus also needs its path: never read by the check).
_TASKS = {name: [f"data={name}"] for name in TASK_CONFIGS}
_TASKS["parallel_text"].append("data.path=pairs.tsv")
_GROUP_INT_KEYS = (
    _int_keys("model", ModelConfig)
    + _int_keys("trainer", TrainerConfig)
    + _int_keys("logging", LoggingConfig)
    + _int_keys("export", ExportConfig)
    + [key for key in _int_keys("", RunConfig) if "." not in key]
)
_SEEDS = ("data.seed", "data.table_seed")  # seeds feed default_rng, which takes any size: not sizes
_HUGE = st.one_of(st.integers(10**12 + 1, 10**40), st.sampled_from([2**63 - 1, 2**63, 2**64]))


@st.composite
def huge_integers(draw) -> tuple[str, list[str]]:
    """(the key, the overrides): a task, then any of its whole-number keys or the other groups' set huge."""
    task = draw(st.sampled_from(sorted(_TASKS)))
    keys = _GROUP_INT_KEYS + _int_keys("data", TASK_CONFIGS[task])
    key = draw(st.sampled_from([key for key in keys if key not in _SEEDS]))
    return key, [*_TASKS[task], f"{key}={draw(_HUGE)}"]


def _check_huge(compose_config, case: tuple[str, list[str]]) -> None:
    key, given = case
    line = _answer(compose_config, given)
    assert line is not None, f"{given} accepted"
    assert "\n" not in line.strip() and _names(line, key), (given, line)


# Each example a compose and a check, as the overrides' property: twenty keep the fuzz tests within a minute.
@settings(DEFAULT, max_examples=20)
@given(case=huge_integers())
def test_a_huge_whole_number_for_any_count_is_refused_in_one_line_naming_the_key(compose_config, case):
    _check_huge(compose_config, case)


@pytest.mark.slow
@SLOW
@given(case=huge_integers())
def test_a_huge_whole_number_for_any_count_is_refused_in_one_line_naming_the_key_slow(compose_config, case):
    _check_huge(compose_config, case)


def test_the_huge_integer_keys_cover_every_task_and_group():
    keys = set(_GROUP_INT_KEYS).union(*(_int_keys("data", config) for config in TASK_CONFIGS.values()))
    assert {"model.d_model", "trainer.epochs", "trainer.early_stopping.patience", "logging.probes"} <= keys
    assert {"export.beam_width", "seeds", "data.num_train", "data.modulus", "data.stream_sample"} <= keys
    assert "export.length_penalty" not in keys and len(keys) > 40


# What the properties found, each as Hypothesis shrank it (issue 65's closing note lists them): a traceback
# or a line of several lines, or a value accepted that fails once TensorFlow runs.
@pytest.mark.parametrize(
    ("override", "line"),
    [
        (
            "data.num_test=???",
            "data.num_test is required: set it on the command line, e.g. data.num_test=...",
        ),
        ("data.num_train=${nowhere}", "Interpolation key 'nowhere' not found; full_key: data.num_train"),
        ("trainer.learning_rate=inf", "trainer.learning_rate=inf must be a finite number"),
        ("trainer.max_train_minutes=inf", "trainer.max_train_minutes=inf must be a finite number (or null)"),
        ("seed=99999999999999999999", "seed=99999999999999999999 must be in [0, 2**32 - 1]"),
        # Accepted before sizes had an upper bound (the first as the huge-integer property shrank it, the
        # second as the issue found it): the first allocation or int64 conversion failed instead.
        ("model.num_encoder_layers=1000000000001", "model.num_encoder_layers=1000000000001 must be <= 1000"),
        (
            "data.num_train=100000000000000000000",
            "data.num_train=100000000000000000000 must be <= 1000000000",
        ),
        ("trainer.step_parts=10000000000000", "trainer.step_parts=10000000000000 must be <= 4096"),
        # A component name of dots only reached importlib as a relative import: a TypeError traceback.
        ("model.ffn_impl=..", "model.ffn_impl='..' is not allowed; '..' is neither a built-in ffn"),
    ],
)
def test_found_by_fuzzing_each_is_one_line_naming_the_key(compose_config, override, line):
    assert _answer(compose_config, [override]).startswith(line)


def test_the_keys_cover_every_group():
    groups = {key.split(".")[0] for key in KEYS}
    assert groups == {"model", "trainer", "logging", "export", "data", "seed"}
    assert "trainer.early_stopping.patience" in KEYS and len(KEYS) > 40


def test_tx_train_refuses_sampled_bad_overrides_in_one_line_before_training(tmp_path):
    """A real tx-train process on a few generated bad overrides at once: Hydra composes the first problem,
    one line, exit 2, no traceback, no run folder with training started."""
    for i, override in enumerate(["trainer.learning_rate=nan", "model.d_model=1e999", "+export.beams_x=3"]):
        run_dir = tmp_path / f"run{i}"
        result = tx_train(*TINY, override, f"hydra.run.dir={run_dir}", cwd=tmp_path)
        key = override.lstrip("+").split("=")[0]
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2, result.stderr
        assert len(lines) == 1 and lines[0].startswith("tx-train: error: ") and key in lines[0], result.stderr
        assert "Traceback" not in result.stderr
        assert not (run_dir / "summary.json").exists() and not list(run_dir.rglob("*.npz"))
