"""`tx-compare SWEEP_DIR --importance` on a fake Optuna sweep folder laid out as the sweeper writes it (no
multirun.yaml; each job's .hydra/hydra.yaml, overrides.yaml and summary.json): the objective depends on
dropout alone, so dropout must rank first; failed, NaN and unfinished jobs are counted and left out."""

import json
import math
import random

import pytest
import yaml

from tx_keras.cli.compare import main
from tx_keras.comparison.param_importance import param_importances

PARAMS = {
    "model.num_encoder_layers": "int(interval(2, 6))",
    "model.dropout": "interval(0.0, 0.3)",
    "trainer.lr_scale": "tag(log, interval(0.5, 2.0))",
    "model.d_model": "choice(256, 384, 512)",
}
SWEEPER = {"direction": "maximize", "storage": None, "params": PARAMS}


def _job(sweep, number, status="completed", bleu=None, rng=None):
    """One job folder; `status=None` leaves it without a summary (still running, or killed)."""
    rng = rng or random.Random(number)
    values = {
        "model.num_encoder_layers": rng.randint(2, 6),
        "model.dropout": rng.uniform(0.0, 0.3),
        "trainer.lr_scale": math.exp(rng.uniform(math.log(0.5), math.log(2.0))),
        "model.d_model": rng.choice([256, 384, 512]),
    }
    overrides = [f"{name}={value}" for name, value in values.items()] + ["sweep=preset_search"]
    folder = sweep / str(number)
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    hydra = {"hydra": {"sweeper": SWEEPER, "overrides": {"task": overrides}}}
    (folder / ".hydra" / "hydra.yaml").write_text(yaml.safe_dump(hydra))
    if status is not None:
        if bleu is None:
            bleu = 20.0 + 60.0 * values["model.dropout"] + rng.uniform(-0.01, 0.01)
        summary = {
            "status": status,
            "metrics": {} if status == "failed" else {"validation_bleu": bleu},
            "config": {"trainer": {"objective": "validation_bleu"}},
        }
        (folder / "summary.json").write_text(json.dumps(summary))
    return values


@pytest.fixture
def sweep(tmp_path):
    """10 completed trials, one failed, one with a NaN objective, one unfinished."""
    folder = tmp_path / "search"
    dropouts = {number: _job(folder, number)["model.dropout"] for number in range(10)}
    _job(folder, 10, status="failed")
    _job(folder, 11, bleu=math.nan)
    _job(folder, 12, status=None)
    return folder, max(dropouts, key=dropouts.get)


def test_the_dominant_param_ranks_first_and_the_skipped_jobs_are_counted(sweep, capsys):
    folder, best = sweep
    main([str(folder), "--importance"])
    out = capsys.readouterr().out
    result = param_importances(folder)
    names = list(result.importances)
    assert names[0] == "model.dropout" and sorted(names) == sorted(PARAMS)
    assert result.importances["model.dropout"] > 0.7
    assert all(result.importances[name] < 0.15 for name in names[1:])
    assert result.used == 10
    assert dict(result.skipped) == {"failed": 1, "no finite validation_bleu": 1, "not finished": 1}
    assert result.best_run.name == str(best) and result.objective == "validation_bleu"
    lines = out.splitlines()
    assert lines[1].split()[:2] == ["param", "importance"] and lines[3].startswith("model.dropout ")
    assert "10 trials used, 3 skipped (1 failed, 1 no finite validation_bleu, 1 not finished)" in out
    assert f"best trial: {folder / str(best)} (validation_bleu " in out


def test_the_same_folder_gives_the_same_importances(sweep):
    folder, _ = sweep
    assert param_importances(folder).importances == param_importances(folder).importances


def test_multirun_yaml_adds_the_command_line_as_the_sweeper_does(tmp_path):
    """Where the sweep folder has multirun.yaml, the command line's overrides count: a swept value adds a
    param to the space (here the heads), as the sweeper's own parser reads them."""
    folder = tmp_path / "search"
    rng = random.Random(0)
    for number in range(6):
        _job(folder, number, rng=rng)
        overrides = folder / str(number) / ".hydra" / "overrides.yaml"
        overrides.write_text(overrides.read_text() + f"- model.num_heads={rng.choice([4, 8])}\n")
    task = ["sweep=preset_search", "model.num_heads=choice(4, 8)"]
    (folder / "multirun.yaml").write_text(
        yaml.safe_dump({"hydra": {"sweeper": SWEEPER, "overrides": {"task": task}}})
    )
    result = param_importances(folder)
    assert set(result.importances) == {*PARAMS, "model.num_heads"} and result.used == 6


def test_under_two_usable_trials_is_one_line_and_exit_2(tmp_path, capsys):
    folder = tmp_path / "search"
    _job(folder, 0)
    _job(folder, 1, status="failed")
    with pytest.raises(SystemExit) as exit_:
        main([str(folder), "--importance"])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err == (
        f"tx-compare: error: importances need at least 2 usable trials; {folder} has 1 of 2 jobs, 1 failed\n"
    )
