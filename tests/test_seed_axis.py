"""`seeds=N`: every setting of a sweep over N training seeds on one data split, as the sweeper sees it."""

import pytest
from hydra import compose, initialize_config_module
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from tests.conftest import tx_train
from tx_keras.launch.seed_axis import SeedAxisError, add_seed_axis


def _jobs(*overrides: str) -> list[list[str]]:
    """The jobs the basic sweeper would launch for `tx-train OVERRIDES` (no training)."""
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        config = compose("config", overrides=list(overrides), return_hydra_config=True)
    assert list(config.hydra.overrides.task) == list(overrides)
    OmegaConf.set_readonly(config.hydra, True)  # as Hydra hands it to the callbacks
    add_seed_axis(config)
    params = config.hydra.sweeper.params or {}
    arguments = [f"{key}={value}" for key, value in params.items()] + list(config.hydra.overrides.task)
    parsed = OverridesParser.create().parse_overrides(arguments)
    return [sorted(job) for job in BasicSweeper.split_arguments(parsed, None)[0]]


def test_seeds_repeat_every_setting_on_the_split_of_the_base_seed():
    jobs = _jobs("sweep=smoke", "seeds=3")
    assert len(jobs) == 6  # 2 settings x 3 seeds, one setting's seeds adjacent
    assert [job for job in jobs if "model.num_heads=1" in job] == jobs[:3]
    assert [[item for item in job if item.startswith("seed=")] for job in jobs[:3]] == [
        ["seed=0"],
        ["seed=1"],
        ["seed=2"],
    ]
    assert all("data.seed=0" in job for job in jobs)  # the split stays put


def test_a_base_seed_moves_the_axis_and_the_split_with_it():
    jobs = _jobs("sweep=smoke", "seeds=2", "seed=5")
    assert sorted({item for job in jobs for item in job if item.startswith(("seed=", "data.seed="))}) == [
        "data.seed=5",
        "seed=5",
        "seed=6",
    ]


def test_one_seed_changes_nothing_and_an_explicit_split_is_kept():
    assert _jobs("sweep=smoke") == [
        sorted(["model.num_heads=1", "sweep=smoke"]),
        sorted(["model.num_heads=2", "sweep=smoke"]),
    ]
    jobs = _jobs("sweep=smoke", "seeds=2", "data.seed=7")
    assert all("data.seed=7" in job and "data.seed=0" not in job for job in jobs)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["sweep=claim_heads", "seeds=3"], "already sweeps seed (0,1,2)"),
        (["sweep=optuna", "seeds=3"], "OptunaSweeper) chooses its own settings"),
        (["sweep=smoke", "seeds=0"], "seeds=0 must be a whole number >= 1"),
    ],
)
def test_seeds_that_cannot_apply_are_refused(overrides, message):
    with pytest.raises(SeedAxisError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _jobs(*overrides)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["seeds=3"],
            "seeds=3 repeats every setting of a sweep: add sweep=NAME or -m "
            "(a single run takes one seed, seed=...)",
        ),
        (["sweep=smoke", "seeds=three"], "seeds='three' has the wrong type: expected int"),  # the schema's
        (
            ["sweep=smoke", "seeds=2", "seed=0,1"],
            "seed=0,1 sweeps the seed already; with seeds=2 give one base seed (seed=B runs B..B+1)",
        ),
    ],
)
def test_tx_train_says_it_in_one_line(tmp_path, arguments, message):
    result = tx_train(*arguments, f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [f"tx-train: error: {message}"]


def test_a_resumed_sweep_job_keeps_its_seeds_and_a_single_run_does_not_take_them(capsys):
    """`resume=JOB_DIR` replays the job's `seeds=3` into a single run: allowed; a plain single run is not."""
    from tx_keras.launch.seed_axis import SeedAxis

    SeedAxis().on_run_start(OmegaConf.create({"seeds": 3, "resume": "outputs/sweeps/heads/x/0"}))
    SeedAxis().on_run_start(OmegaConf.create({"seeds": 1, "resume": None}))
    assert capsys.readouterr().err == ""
    with pytest.raises(SystemExit) as exit_info:
        SeedAxis().on_run_start(OmegaConf.create({"seeds": 2, "resume": None}))
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("tx-train: error: seeds=2 repeats every setting of a sweep")
