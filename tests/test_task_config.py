"""Task configs: one dataclass per family gives the keys, types and defaults; the YAML files agree with it,
and Hydra refuses an unknown key or a wrong type while composing."""

import dataclasses
from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_module
from hydra.errors import ConfigCompositionException

from tx_keras.data.registry import _BUILDERS
from tx_keras.data.task_config import TASK_CONFIGS, ParallelTextConfig, SymbolTaskConfig, task_config
from tx_keras.training.run.error_line import error_line

CONF = Path(__file__).parents[1] / "conf" / "data"


@pytest.fixture(scope="module")
def compose_config():
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        yield lambda *overrides: compose(config_name="config", overrides=list(overrides))


def test_every_task_has_a_builder_and_a_yaml_file():
    assert list(_BUILDERS) == list(TASK_CONFIGS)
    assert sorted(path.stem for path in CONF.glob("*.yaml")) == sorted(TASK_CONFIGS)


@pytest.mark.parametrize("name", list(TASK_CONFIGS))
def test_yaml_states_exactly_the_dataclass_keys_and_defaults(name):
    """The YAML repeats each value beside its comment: it must not drift from the dataclass."""
    stated = yaml.safe_load((CONF / f"{name}.yaml").read_text(encoding="utf-8"))
    stated.pop("defaults")
    defaults = {field.name: field.default for field in dataclasses.fields(TASK_CONFIGS[name])}
    assert list(stated) == [key for key in stated if key in defaults] and set(stated) == set(defaults)
    assert stated.pop("name") == name and stated.pop("seed") == "${seed}"
    assert stated == {key: defaults[key] for key in stated}


@pytest.mark.parametrize("name", list(TASK_CONFIGS))
def test_composed_config_builds_its_dataclass(compose_config, name):
    overrides = [f"data={name}", "seed=5"] + (["data.path=pairs.tsv"] if name == "parallel_text" else [])
    config = task_config(compose_config(*overrides).data)
    assert type(config) is TASK_CONFIGS[name] and config.name == name and config.seed == 5


def test_parallel_text_tokenizer_default_is_auto_as_the_yaml_says():
    assert ParallelTextConfig(name="parallel_text", path="x").tokenizer == "auto"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("data.lenght=3",), "Key 'lenght' not in 'TranslationConfig'"),
        (("data=copy", "data.length=long"), "Value 'long' of type 'str' could not be converted to Integer"),
        (("data=modular_addition", "data.table_seed=1"), "Key 'table_seed' not in 'FactTableConfig'"),
        (("data=parallel_text", "data.lowercase=maybe"), "Value 'maybe' is not a valid bool"),
    ],
)
def test_unknown_keys_and_wrong_types_fail_at_composition(compose_config, overrides, message):
    with pytest.raises(ConfigCompositionException) as error:
        compose_config(*overrides)
    assert message in str(error.value.__cause__)
    line = error_line(f"{error.value}\n{error.value.__cause__}")  # what tx-train prints
    assert "\n" not in line and f"data.{overrides[-1].split('.')[1].split('=')[0]}" in line


def test_plain_dicts_take_the_defaults_and_refuse_unknown_keys_and_bad_values():
    assert task_config({"name": "sort", "num_train": 8}) == SymbolTaskConfig(name="sort", num_train=8)
    with pytest.raises(ValueError, match=r"^data.lenght is not a key of data=copy; its keys: name, seed"):
        task_config({"name": "copy", "lenght": 3})
    with pytest.raises(ValueError, match=r"^data.tokenizer='bpe' is not allowed; choose one of"):
        task_config({"name": "parallel_text", "path": "x", "tokenizer": "bpe"})
    with pytest.raises(ValueError, match=r"^data.num_test=0 must be >= 1$"):
        task_config({"name": "translation", "num_test": 0})
    with pytest.raises(ValueError, match=r"^data.path is required: set it on the command line, e.g. data.pa"):
        task_config({"name": "parallel_text"})
