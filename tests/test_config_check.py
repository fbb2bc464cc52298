"""Every bad value gets one line that names the key and what is allowed: a wrong key or type from the
schemas (Hydra, at composition), a wrong value from the config check."""

import subprocess
import sys

import pytest
from hydra import compose, initialize_config_module
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from tests.conftest import TINY
from tx_keras.training.run.config_check import check_components, check_config
from tx_keras.training.run.error_line import error_line
from tx_keras.user_error import ConfigError


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
        ("model.attention=none",),  # fused_qkv (on by default) belongs to the fused form; others ignore it
        ("model.attention_impl=looped",),
        ("model.positions=rotary", "model.norm=pre"),
        ("model.attention_impl=tests.test_plugin_components.ToyAttention", "model.ffn_impl=dense"),
        ("trainer.schedule=constant", "trainer.warmup_steps=0", "trainer.learning_rate=1e-2"),
        ("trainer.jit_compile=true", "trainer.early_stopping.patience=null", "export.length_penalty=1"),
    ]:
        cfg = compose_config(*overrides)
        check_components(check_config(cfg).model)


@pytest.fixture
def tx_train_aside(tx_train_here):
    """`tx_train_here` with this module's Hydra (compose_config keeps it initialised) set aside meanwhile:
    tx-train's main initialises Hydra itself, and clears it when it ends."""
    from hydra.core.global_hydra import GlobalHydra

    composer = GlobalHydra.instance().hydra
    GlobalHydra.instance().clear()
    yield tx_train_here
    GlobalHydra.instance().clear()
    if composer is not None:
        GlobalHydra.instance().initialize(composer)


def _problem(compose_config, *overrides) -> str:
    """The line tx-train prints for `overrides`: a composition error (the schemas check keys and types)
    as tx_keras.cli.train words it, or the config check's."""
    try:
        cfg = compose_config(*overrides)
    except (HydraException, OmegaConfBaseException) as error:
        return error_line(f"{error}\n{error.__cause__}", compose_config())  # feeds "did you mean"
    with pytest.raises(ConfigError) as error:
        check_components(check_config(cfg).model)
    return str(error.value)


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
            "model.positions='rope' is not allowed; 'rope' is neither a built-in positions "
            "(sinusoidal, learned, rotary, none) nor an import path like my_package.my_module.MyLayer",
        ),
        ("model.attention_impl=sparse", "neither a built-in attention (fused, looped) nor an import path"),
        (
            "model.ffn_impl=moe",
            "model.ffn_impl='moe' is not allowed; 'moe' is neither a built-in ffn (dense)",
        ),
        (
            "model.norm_impl=my_norms.RMSNorm",
            "model.norm_impl='my_norms.RMSNorm' is not allowed; norm 'my_norms.RMSNorm' cannot be imported: "
            "No module named 'my_norms'",
        ),
        (
            "model.attention_impl=keras.layers.Dropout2",
            "attention 'keras.layers.Dropout2' cannot be imported: module 'keras.layers' has no attribute",
        ),
        (
            "model.ffn_impl=tx_keras.models.model_config.ModelConfig",
            "ffn 'tx_keras.models.model_config.ModelConfig' is not a keras.layers.Layer subclass",
        ),
        (
            "+model.width=3",
            "model.width is not a model knob; the knobs: num_encoder_layers, num_decoder_layers",
        ),
        (
            "model.positions=rotary model.d_model=6 model.num_heads=2",
            "model.positions=rotary rotates pairs of features: d_model / num_heads = 3 must be even",
        ),
        ("model.dropout=1.5", "model.dropout=1.5 must be in [0, 1)"),
        ("data.name=wmt", "data.name='wmt' is not a task; choose one of: translation, copy, reverse, sort"),
        ("trainer.epochs=0", "trainer.epochs=0 must be >= 1"),
        ("trainer.max_steps=0", "trainer.max_steps=0 must be >= 1"),
        ("logging.loss_every_steps=-1", "logging.loss_every_steps=-1 must be >= 0"),
        ("trainer.batch_size=8.5", "trainer.batch_size='8.5' has the wrong type: expected int"),
        ("trainer.clip_norm=-1", "trainer.clip_norm=-1.0 must be > 0"),
        ("trainer.checkpoint_every_minutes=0", "trainer.checkpoint_every_minutes=0.0 must be > 0"),
        ("~trainer.warmup_steps", "trainer.warmup_steps cannot be removed: the schema gives it a value"),
        ("~seed", "seed is missing from the config"),
        ("model.attention=partial", "model.attention='partial' is not allowed; choose one of: full, none"),
        (
            "trainer.schedule=cosine",
            "trainer.schedule='cosine' is not allowed; choose one of: noam, constant",
        ),
        ("trainer.warmup_steps=0", "trainer.warmup_steps=0 must be >= 1 with trainer.schedule=noam"),
        ("trainer.learning_rate=0", "trainer.learning_rate=0.0 must be >= 1e-12"),
        ("trainer.backend=torch", "trainer.backend='torch' is not allowed; choose one of: tensorflow, jax"),
        (
            "trainer.backend=jax trainer.jit_compile=false",
            "trainer.jit_compile=false with trainer.backend=jax: JAX would run every op",
        ),
        ("trainer.step_parts=0", "trainer.step_parts=0 is not allowed; choose auto or a whole number >= 1"),
        (
            "trainer.step_parts=2 trainer.backend=jax",
            "trainer.step_parts=2 with trainer.backend=jax: a compiled step is scheduled by XLA",
        ),
        (
            "trainer.step_parts=2 trainer.jit_compile=true",
            "trainer.step_parts=2 with trainer.jit_compile=true: a compiled step is scheduled by XLA",
        ),
        (
            "trainer.step_parts=2 trainer.distribution=data_parallel",
            "trainer.step_parts=2 with trainer.distribution=data_parallel: the replicas already run side by",
        ),
    ],
)
def test_bad_values_give_one_line(compose_config, override, message):
    problem = _problem(compose_config, *override.split())
    assert message in problem and "\n" not in problem


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model.d_model=big", "model.d_model='big' has the wrong type: expected int"),
        ("model.d_model=true", "model.d_model='True' has the wrong type: expected int"),
        ("model.dropout=often", "model.dropout='often' has the wrong type: expected float"),
        ("model.residual=maybe", "model.residual='maybe' has the wrong type: expected bool"),
        ("model.num_head=2", "model.num_head is not a config key"),
        ("seed=abc", "seed='abc' has the wrong type: expected int"),
        ("trainer.deterministic=maybe", "trainer.deterministic='maybe' has the wrong type: expected bool"),
        ("trainer.jit_compile=3", "trainer.jit_compile='3' has the wrong type: expected bool or str"),
        ("trainer.early_stopping.patience=two", "trainer.early_stopping.patience='two' has the wrong type"),
        ("trainer.early_stoping.patience=2", "trainer.early_stoping.patience is not a config key"),
        ("logging.probes=1.5", "logging.probes='1.5' has the wrong type: expected int"),
        (
            "logging.tensorbord=false",
            "logging.tensorbord is not a config key; did you mean logging.tensorboard or",
        ),
        ("export.beam_width=wide", "export.beam_width='wide' has the wrong type: expected int"),
        ("+trainer.epoch=3", "trainer.epoch is not a trainer key; the keys: epochs, max_train_minutes"),
        (
            "+trainer.early_stopping.wait=3",
            "trainer.early_stopping.wait is not a trainer key; the keys: patience",
        ),
        ("+export.beams=3", "export.beams is not a export key; the keys: enabled, beam_width"),
        (
            "logging.attention_maps=sometimes",
            "logging.attention_maps='sometimes' is not allowed; choose one of",
        ),
    ],
)
def test_the_schemas_refuse_wrong_types_and_keys_in_one_line(compose_config, override, message):
    assert _problem(compose_config, override).startswith(message)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model.dff=wide", "tx-train: error: model.dff='wide' has the wrong type: expected int"),
        ("+model.width=3", "tx-train: error: model.width is not a model knob; the knobs: num_encoder_layers"),
        ("model.positions=my.Positions", "tx-train: error: model.positions='my.Positions' is not allowed"),
    ],
)
def test_tx_train_refuses_a_bad_model_knob_in_one_line_before_training(
    tmp_path, tx_train_aside, override, message
):
    """Through tx-train's main in this process (the refusals before TensorFlow starts, below, run in fresh
    processes)."""
    result = tx_train_aside(*TINY, override, f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)
    lines = [line for line in result.stderr.splitlines() if line.startswith("tx-train")]
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run" / "summary.json").exists()


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
    assert message in _problem(compose_config, *overrides)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ("export.length_penalty=best",),
            "export.length_penalty='best' is not allowed; choose auto or a number >= 0",
        ),
        (("export.length_penalty=-0.5",), "export.length_penalty=-0.5 must be >= 0 (or auto)"),
        (("export.length_penalty=true",), "export.length_penalty='True' has the wrong type"),
        (
            ("export.length_penalty_grid=[]",),
            "export.length_penalty_grid=[] must be a non-empty list of numbers >= 0",
        ),
        (
            ("export.length_penalty_grid=[0.6,x]",),
            "export.length_penalty_grid='x' has the wrong type: expected float",
        ),
        (
            ("export.length_penalty_grid=1.0",),
            "export.length_penalty_grid=1.0 has the wrong type: expected list",
        ),
        (("export.length_penalty=auto",), "export.length_penalty=auto picks the alpha by validation chrF"),
    ],
)
def test_the_length_penalty_is_auto_or_a_number(compose_config, overrides, message):
    problem = _problem(compose_config, *overrides)
    assert message in problem and "\n" not in problem


def test_auto_length_penalty_is_accepted_on_real_text(compose_config):
    check_config(compose_config("data=parallel_text", "data.path=pairs.tsv", "export.length_penalty=auto"))
    check_config(compose_config("export.length_penalty=1"))


def test_the_check_imports_no_tensorflow_and_leaves_a_users_class_to_the_component_check(compose_config):
    """tx-train checks before TensorFlow starts (a typo fails in about a second): the module must not
    import it, and a user's import path, which only an import can check, waits for check_components."""
    probe = "import sys, tx_keras.training.run.config_check\n"
    probe += "print(sorted({'tensorflow', 'keras'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
    cfg = compose_config("model.attention_impl=no_such_package.Attention")
    model = check_config(cfg).model  # deferred, not passed: the component check below refuses it
    with pytest.raises(ConfigError, match="'no_such_package.Attention' cannot be imported"):
        check_components(model)
    with pytest.raises(ConfigError, match="model.norm='sideways' is not allowed"):
        check_config(compose_config("model.norm=sideways"))


def test_a_run_checks_its_config_once(compose_config, tmp_path, monkeypatch):
    """tx-train's one check per job (training/run/job.py): not again in the run, nor in the command."""
    import tx_keras.training.run.job as job

    calls = []

    def counted(name, function):
        def wrapper(*args):
            calls.append(name)
            return function(*args)

        return wrapper

    monkeypatch.setattr(job, "check_config", counted("check_config", job.check_config))
    monkeypatch.setattr(job, "check_components", counted("check_components", job.check_components))
    overrides = [*TINY, "trainer.epochs=1", "export.enabled=false", "logging.tensorboard=false"]
    objective = job.run_job(compose_config(*overrides), tmp_path / "run", isolate_failures=False)
    assert 0.0 <= objective <= 1.0  # the run completed (its validation exact match)
    assert calls == ["check_config", "check_components"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("trainer.epochs=0", "tx-train: error: trainer.epochs=0 must be >= 1"),
        (
            "trainer.epoch=3",
            "tx-train: error: trainer.epoch is not a config key; did you mean trainer.epochs",
        ),
    ],
)
def test_tx_train_refuses_a_bad_config_before_tensorflow_starts(tmp_path, override, message):
    """The one check (and the schemas) run before TensorFlow is imported: `-X importtime` lists every
    module the process imported, and neither TensorFlow nor Keras may be among them."""
    command = [sys.executable, "-X", "importtime", "-m", "tx_keras.cli.train", override]
    result = subprocess.run(
        [*command, f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, capture_output=True, text=True
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("tx-train")]
    assert result.returncode == 2 and lines == [lines[0]] and lines[0].startswith(message), result.stderr[
        -2000:
    ]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "import time:" in line}
    assert "json" in imported and not {"tensorflow", "keras"} & imported


def test_a_backend_that_is_not_installed_is_refused_before_keras_starts(compose_config, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a)
    )
    problem = _problem(compose_config, "trainer.backend=jax")
    assert problem == (
        "trainer.backend='jax' needs jax, which is not installed (pip install 'tx_keras[jax]')"
    )


def test_a_process_running_keras_on_one_backend_refuses_another(monkeypatch):
    """Keras reads KERAS_BACKEND once: a sweep worker reused for a job of the other backend must say so."""
    import keras

    from tx_keras.runtime.keras_backend import BackendMismatch, select_backend

    monkeypatch.setenv("KERAS_BACKEND", keras.backend.backend())
    select_backend(keras.backend.backend())  # the backend already running: accepted
    other = "jax" if keras.backend.backend() == "tensorflow" else "tensorflow"
    with pytest.raises(BackendMismatch, match=f"trainer.backend={other}: this process already runs Keras"):
        select_backend(other)
