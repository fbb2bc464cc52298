"""The schemas of the trainer, logging and export groups and of the top-level keys: the YAML files agree
with their dataclasses, and composition applies the schema (types, defaults) to every config."""

from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from tx_keras.export.export_config import ExportConfig
from tx_keras.training.logging_config import LoggingConfig
from tx_keras.training.run.run_config import RunKeys
from tx_keras.training.trainer_config import TrainerConfig

CONF = Path(__file__).parents[1] / "conf"
SCHEMAS = {"trainer": TrainerConfig, "logging": LoggingConfig, "export": ExportConfig}


@pytest.mark.parametrize("group", list(SCHEMAS))
def test_yaml_states_the_schema_defaults(group):
    """The YAML repeats each value beside its comment: it must not drift from the dataclass."""
    stated = yaml.safe_load((CONF / group / "default.yaml").read_text(encoding="utf-8"))
    assert stated.pop("defaults") == [f"/schema/{group}@_here_", "_self_"]
    defaults = OmegaConf.to_container(OmegaConf.structured(SCHEMAS[group]))
    assert stated == {key: defaults[key] for key in stated}
    missing = set(defaults) - set(stated)
    assert missing <= {"checkpoint_every_minutes"}, missing  # another branch adds it to the YAML


def test_the_top_level_keys_are_the_run_schemas():
    stated = yaml.safe_load((CONF / "config.yaml").read_text(encoding="utf-8"))
    assert stated["defaults"][0] == "/schema/run@_here_"
    defaults = OmegaConf.to_container(OmegaConf.structured(RunKeys))
    assert {key: stated[key] for key in ("seed", "resume")} == {
        key: defaults[key] for key in ("seed", "resume")
    }


def test_every_group_of_a_composed_config_has_its_schema():
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=tatoeba_small", "data.path=pairs.tsv"])
    assert OmegaConf.get_type(cfg) is RunKeys
    assert {group: OmegaConf.get_type(cfg[group]) for group in SCHEMAS} == SCHEMAS
    assert cfg.trainer.checkpoint_every_minutes is None and cfg.seeds == 1  # the schema's defaults
    assert isinstance(cfg.trainer.lr_scale, float) and cfg.trainer.jit_compile == "auto"
