"""tx-compare over a folder of runs at any depth (outputs/ holds single runs as <date>/<time>/)."""

import json
import subprocess
import sys
from pathlib import Path

from tests.ahead import ahead_fixture
from tests.conftest import main_here
from tx_keras.cli import compare
from tx_keras.comparison import collect_runs
from tx_keras.comparison.table import table_rows


def _run(folder, loss, overrides=()):
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(json.dumps(list(overrides)))  # YAML, as Hydra writes
    summary = {
        "status": "completed",
        "metrics": {"validation_loss": loss},
        "parameters": 10,
        "wall_time_s": 1.0,
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "export" / "saved_model").mkdir(parents=True)  # a run's own sub-folders are no runs


def _outputs(root):
    _run(root / "2026-12-01" / "19-42-38", 0.5)
    _run(root / "2026-11-30" / "08-00-00", 0.7)
    sweep = root / "sweeps" / "heads" / "2026-11-30_18-00-00"
    _run(sweep / "1_model.num_heads=4", 0.2, ["model.num_heads=4"])
    _run(sweep / "0_model.num_heads=1", 0.3, ["model.num_heads=1"])
    return sweep


def test_nested_collects_every_run_named_by_its_path_and_a_sweep_alone_as_before(tmp_path):
    sweep = _outputs(tmp_path)
    names = [run.name for run in collect_runs(tmp_path, nested=True)]
    assert names == [
        "2026-11-30/08-00-00",
        "2026-12-01/19-42-38",
        "sweeps/heads/2026-11-30_18-00-00/0_model.num_heads=1",
        "sweeps/heads/2026-11-30_18-00-00/1_model.num_heads=4",
    ]
    assert collect_runs(tmp_path) == []  # claims and sweeps look one level down only
    assert [run.name for run in collect_runs(sweep)] == [run.name for run in collect_runs(sweep, nested=True)]
    _, rows = table_rows(collect_runs(tmp_path, nested=True), "validation_loss")
    assert [row[0] for row in rows] == [
        "sweeps/heads/2026-11-30_18-00-00/1",
        "sweeps/heads/2026-11-30_18-00-00/0",
        "2026-12-01/19-42-38",
        "2026-11-30/08-00-00",
    ]


def test_tx_compare_on_outputs_lists_every_run(tmp_path, capsys):
    """Through tx-compare's main in this process (the damaged folder below runs in a fresh one)."""
    _outputs(tmp_path)
    result = main_here(compare.main, capsys, str(tmp_path), "--metric", "validation_loss")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "2026-12-01/19-42-38" in result.stdout and "sweeps/heads/2026-11-30_18-00-00/1" in result.stdout
    assert (tmp_path / "comparison.csv").read_text().count("\n") == 5  # header + 4 runs


@ahead_fixture
def damaged_outputs_compared(folder: Path) -> subprocess.CompletedProcess:
    """`tx-compare` in a fresh process on an outputs folder whose one run has a broken overrides.yaml."""
    _outputs(folder)
    (folder / "2026-12-01" / "19-42-38" / ".hydra" / "overrides.yaml").write_text("model: 3\n")
    command = [sys.executable, "-m", "tx_keras.cli.compare", str(folder)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_damaged_run_folder_is_one_line_not_a_traceback(damaged_outputs_compared):
    """As a user meets it: TensorFlow's start-up lines, then the one error line."""
    result = damaged_outputs_compared
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1].startswith("tx-compare: error: ")
    assert "overrides.yaml is not a list of overrides" in result.stderr


def test_a_search_s_float_knobs_read_at_4_digits_and_its_csv_keeps_them_whole(tmp_path, capsys):
    """Optuna writes a float with every digit: the table, the group table and the pictures' labels show 4
    significant ones, the CSV what the sweeper wrote; a knob every run shares is no picture panel."""
    from tx_keras.comparison.plots import _run_label, _varying

    sweep = tmp_path / "search"
    settings = [("0.11061755119828923", "3918"), ("0.038677889296", "565"), ("1.5858317233321109", "570")]
    for job, (dropout, warmup) in enumerate(settings):
        overrides = [f"model.dropout={dropout}", f"trainer.warmup_steps={warmup}", "data.path=/x/eng-fra.tsv"]
        _run(sweep / str(job), 0.5 - job / 10, overrides)
    result = main_here(compare.main, capsys, str(sweep), "--metric", "validation_loss")
    assert result.returncode == 0, result.stderr[-2000:]
    table = result.stdout.split("\n\n")[0]
    assert "0.1106" in table and "0.03868" in table and "1.586" in table
    assert "0.11061755119828923" not in result.stdout
    csv_text = (sweep / "comparison.csv").read_text()
    assert "0.11061755119828923" in csv_text and "1.5858317233321109" in csv_text
    runs = collect_runs(sweep)
    assert _varying(runs) == ["model.dropout", "trainer.warmup_steps"]  # data.path is shared
    assert _run_label(runs[0], _varying(runs)) == "0: model.dropout=0.1106, trainer.warmup_steps=3918"
    for name in ("validation_loss_by_knob.png", "validation_loss_by_group.png", "validation_curves.png"):
        assert (sweep / name).stat().st_size > 1000


def test_validation_only_hides_every_test_figure_and_refuses_to_sort_by_one(tmp_path, capsys):
    for job, loss in enumerate((0.4, 0.3)):
        _run(tmp_path / str(job), loss, [f"trainer.lr_scale={job + 1}"])
        summary_path = tmp_path / str(job) / "summary.json"
        summary = json.loads(summary_path.read_text())
        summary["metrics"]["test_bleu"] = 30.0 + job
        summary_path.write_text(json.dumps(summary))
    shown = main_here(compare.main, capsys, str(tmp_path), "--metric", "validation_loss")
    assert "test_bleu" in shown.stdout and "test_bleu" in (tmp_path / "comparison.csv").read_text()
    args = (str(tmp_path), "--validation-only", "--metric")
    hidden = main_here(compare.main, capsys, *args, "validation_loss")
    assert hidden.returncode == 0, hidden.stderr[-2000:]
    assert "validation_loss" in hidden.stdout and "test_bleu" not in hidden.stdout
    for name in ("comparison.csv", "comparison.md", "groups.csv", "groups.json"):
        assert "test_bleu" not in (tmp_path / name).read_text(), name
    refused = main_here(compare.main, capsys, *args, "test_bleu")
    assert refused.returncode == 2 and "--validation-only hides test_bleu" in refused.stderr


def _seeded(folder: Path, values: dict[str, float], overrides=()):
    """One run per seed in `folder`, each with these summary metrics plus a seed-specific shift."""
    for seed, shift in enumerate((-0.5, 0.0, 0.5)):
        run = folder / f"{seed}_seed={seed}"
        _run(run, 0.0, [*overrides, f"seed={seed}"])
        summary = json.loads((run / "summary.json").read_text())
        summary["metrics"] = {name: value + shift for name, value in values.items()}
        (run / "summary.json").write_text(json.dumps(summary))


def test_a_baseline_is_tested_one_sided_against_each_candidate_with_holm(tmp_path, capsys):
    from scipy import stats

    _seeded(tmp_path / "current", {"validation_bleu": 43.5, "validation_loss": 2.5})
    _seeded(tmp_path / "trial_3", {"validation_bleu": 45.5, "validation_loss": 2.4}, ["model.dff=2048"])
    _seeded(tmp_path / "trial_5", {"validation_bleu": 43.6, "validation_loss": 2.6}, ["model.dff=512"])

    def tx_compare(metric, baseline):
        return main_here(compare.main, capsys, str(tmp_path), "--metric", metric, "--baseline", baseline)

    result = tx_compare("validation_bleu", "current")
    assert result.returncode == 0, result.stderr[-2000:]
    part = result.stdout.split("against the baseline current by validation_bleu (higher is better)")[1]
    lines = {line.split()[0]: line for line in part.splitlines()[3:] if line.strip()}
    assert "better than the baseline" in lines["trial_3"] and "not shown better" in lines["trial_5"]
    base, best = [43.0, 43.5, 44.0], [45.0, 45.5, 46.0]
    p = stats.ttest_ind(best, base, equal_var=False, alternative="greater").pvalue
    assert f"{p:.2g}" in lines["trial_3"] and "+2.0000" in lines["trial_3"]
    # a loss is better lower: trial_3's 0.1 lower loss is its gain
    loss = tx_compare("validation_loss", "current")
    assert "(lower is better)" in loss.stdout and "+0.1000" in loss.stdout
    missing = tx_compare("validation_bleu", "nope")
    assert missing.returncode == 2 and "--baseline nope: no group in that folder" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
