"""Every bad value gets one line that names the key and what is allowed."""

import pytest
from hydra import compose, initialize_config_module

from tx_keras.config_check import ConfigError, check_config


@pytest.fixture(scope="module")
def compose_config():
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        yield lambda *overrides: compose(config_name="config", overrides=list(overrides))


def test_default_and_preset_configs_are_valid(compose_config):
    for overrides in [
        (),
        ("model=tiny",),
        ("model=base",),
        ("data=reverse",),
        ("data=sort",),
        ("data=copy",),
        ("experiment=reverse",),
        ("trainer.clip_norm=1.0",),
        ("data=lookup",),
        ("data=modular_addition", "data.holdout=0.2"),
        ("data=associative_recall",),
        ("model.attention=none",),
        ("trainer.schedule=constant", "trainer.warmup_steps=0", "trainer.learning_rate=1e-2"),
    ]:
        check_config(compose_config(*overrides))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "model.num_heads=3",
            "model.num_heads=3 does not divide model.d_model=64; choose num_heads in 1, 2, 4, 8",
        ),
        ("model.num_heads=0", "model.num_heads=0 must be >= 1"),
        ("model.num_encoder_layers=0", "model.num_encoder_layers=0 must be >= 1"),
        ("model.num_decoder_layers=-2", "model.num_decoder_layers=-2 must be >= 1"),
        ("model.norm=middle", "model.norm='middle' is not allowed; choose one of: post, pre, none"),
        (
            "model.positions=rope",
            "model.positions='rope' is not allowed; choose one of: sinusoidal, learned, none",
        ),
        ("model.attention_impl=sparse", "choose one of: fused, looped"),
        ("model.d_model=big", "model.d_model='big' has the wrong type: expected int"),
        ("model.d_model=true", "model.d_model=True has the wrong type: expected int"),
        ("model.residual=maybe", "model.residual='maybe' has the wrong type: expected bool"),
        ("model.dropout=1.5", "model.dropout=1.5 must be in [0, 1)"),
        ("data.name=wmt", "data.name='wmt' is not allowed; choose one of: translation, copy, reverse, sort"),
        ("trainer.epochs=0", "trainer.epochs=0 must be >= 1"),
        ("trainer.batch_size=8.5", "trainer.batch_size=8.5 has the wrong type: expected int"),
        ("trainer.clip_norm=-1", "trainer.clip_norm=-1 must be > 0"),
        ("~trainer.warmup_steps", "trainer.warmup_steps is missing from the config"),
        ("model.attention=partial", "model.attention='partial' is not allowed; choose one of: full, none"),
        (
            "trainer.schedule=cosine",
            "trainer.schedule='cosine' is not allowed; choose one of: noam, constant",
        ),
        ("trainer.warmup_steps=0", "trainer.warmup_steps=0 must be >= 1 with trainer.schedule=noam"),
        ("trainer.learning_rate=0", "trainer.learning_rate=0 must be >= 1e-12"),
    ],
)
def test_bad_values_give_one_line(compose_config, override, message):
    with pytest.raises(ConfigError) as error:
        check_config(compose_config(override))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("data=lookup", "data.modulus=1"), "data.modulus=1 must be >= 2"),
        (("data=lookup", "data.holdout=1.5"), "data.holdout=1.5 must be in [0, 1)"),
        (("data=associative_recall", "data.num_queries=0"), "data.num_queries=0 must be >= 1"),
        (("data=copy", "data.min_length=13"), "data.min_length=13 must be <= data.length=12"),
        (("data=parallel_text", "data.path=x", "data.vocab_size=4"), "data.vocab_size=4 leaves no room"),
        (("data=parallel_text",), "data.path is required"),
    ],
)
def test_claim_task_keys_are_checked(compose_config, overrides, message):
    with pytest.raises(ConfigError) as error:
        check_config(compose_config(*overrides))
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ("export.length_penalty=best",),
            "export.length_penalty='best' is not allowed; choose auto or a number >= 0",
        ),
        (("export.length_penalty=-0.5",), "export.length_penalty=-0.5 must be >= 0 (or auto)"),
        (("export.length_penalty=true",), "export.length_penalty=True has the wrong type"),
        (
            ("export.length_penalty_grid=[]",),
            "export.length_penalty_grid=[] must be a non-empty list of numbers >= 0",
        ),
        (
            ("export.length_penalty_grid=[0.6,x]",),
            "export.length_penalty_grid=[0.6, 'x'] must be a non-empty list of numbers >= 0",
        ),
        (
            ("export.length_penalty_grid=1.0",),
            "export.length_penalty_grid=1.0 has the wrong type: expected list",
        ),
        (("export.length_penalty=auto",), "export.length_penalty=auto picks the alpha by validation chrF"),
    ],
)
def test_the_length_penalty_is_auto_or_a_number(compose_config, overrides, message):
    with pytest.raises(ConfigError) as error:
        check_config(compose_config(*overrides))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_auto_length_penalty_is_accepted_on_real_text(compose_config):
    check_config(compose_config("data=parallel_text", "data.path=pairs.tsv", "export.length_penalty=auto"))
    check_config(compose_config("export.length_penalty=1"))
