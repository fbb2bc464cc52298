"""Runs grouped by setting: mean ± sd, intervals, every pair by Welch with Holm, on known differences and on
constructed run folders (a group with one usable run, two sweeps under one parent, all groups equal), and
the false "worse than the best" rate when every group is equal, simulated."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tests.conftest import main_here
from tx_keras.cli import compare
from tx_keras.comparison.groups import BEST, NO_TEST, TIED, WORSE, compare_groups, group_runs
from tx_keras.comparison.sweep_runs import RunRecord


def _record(job, heads, seed, value, status="completed", metric="validation_exact_match"):
    overrides = {"data.seed": "0", "model.num_heads": str(heads), "seed": str(seed)}
    return RunRecord(f"{job}_x", Path("no_folder") / str(job), overrides, status, metrics={metric: value})


def _sweep(means, seeds, sd, rng):
    """One group per entry of `means` (heads 1, 2, ...), `seeds` runs each drawn from N(mean, sd)."""
    runs = []
    for i, mean in enumerate(means):
        for seed in range(seeds):
            runs.append(_record(len(runs), i + 1, seed, float(rng.normal(mean, sd))))
    return runs


def test_groups_are_settings_without_the_seed_with_mean_sd_and_interval():
    runs = [
        _record(i, heads, seed, 0.5 + 0.1 * heads + 0.01 * seed)
        for i, (heads, seed) in enumerate([(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (4, 0)])
    ]
    groups = group_runs(runs, "validation_exact_match")
    assert [dict(g.setting)["model.num_heads"] for g in groups] == ["1", "2", "4"]
    assert [g.summary.n for g in groups] == [3, 3, 1]
    first = groups[0].summary
    assert first.mean == pytest.approx(0.61) and first.sd == pytest.approx(0.01)
    half = stats.t.ppf(0.975, 2) * 0.01 / math.sqrt(3)  # 4.30 standard errors at n = 3
    assert first.interval == pytest.approx((0.61 - half, 0.61 + half))
    assert (
        groups[2].summary.interval is None and groups[2].note == "1 of 1 runs usable: no interval, not tested"
    )


def test_known_differences_come_out_right_and_one_distribution_is_not_split():
    """True means 0.80 (best), 0.79 (1 sd below) and 0.70 (10 sd below), sd 0.01, 5 seeds each, at a
    fixed seed: the far group is worse, the near one cannot be told from the best; then 4 groups from
    one distribution: none is called worse."""
    rng = np.random.default_rng(0)
    groups = compare_groups(_sweep([0.80, 0.79, 0.70], 5, 0.01, rng), "validation_exact_match")
    verdicts = {dict(g.setting)["model.num_heads"]: g for g in groups}
    assert verdicts["1"].verdict == BEST
    assert verdicts["2"].verdict == TIED and verdicts["2"].p_holm >= 0.05
    assert verdicts["3"].verdict == WORSE and verdicts["3"].p_holm < 1e-4
    assert verdicts["3"].against_best.difference == pytest.approx(-0.1, abs=0.02)  # the group minus the best
    # Holm over all 3 pairs (the pair 2-3 too): the smallest p times 3, the next times 2 (this one: the
    # pair 2-3 has the smallest p at this seed), kept monotone.
    assert verdicts["3"].pairs == 3 and verdicts["3"].p_holm == pytest.approx(2 * verdicts["3"].p)
    assert verdicts["2"].p_holm >= verdicts["2"].p
    low, high = verdicts["3"].against_best.low, verdicts["3"].against_best.high
    assert low < -0.1 < high < 0  # simultaneous 95 % interval (Bonferroni over 3): wider than a single one
    single = stats.ttest_ind(
        [r.metrics["validation_exact_match"] for r in verdicts["3"].runs],
        [r.metrics["validation_exact_match"] for r in verdicts["1"].runs],
        equal_var=False,
    ).confidence_interval(0.95)
    assert low < single.low and high > single.high

    same = compare_groups(_sweep([0.8] * 4, 3, 0.01, np.random.default_rng(1)), "validation_exact_match")
    assert [g.verdict for g in same] == [BEST, TIED, TIED, TIED]


def test_a_loss_ranks_lowest_first_and_failed_runs_do_not_count():
    runs = [
        _record(0, 1, 0, 0.30, metric="validation_loss"),
        _record(1, 1, 1, 0.31, metric="validation_loss"),
        _record(2, 2, 0, 0.10, metric="validation_loss"),
        _record(3, 2, 1, 0.11, metric="validation_loss"),
        _record(4, 2, 2, math.nan, status="failed", metric="validation_loss"),
    ]
    groups = compare_groups(runs, "validation_loss")
    assert dict(groups[0].setting)["model.num_heads"] == "2" and groups[0].summary.n == 2
    assert groups[1].verdict == WORSE and groups[1].against_best.difference > 0  # a higher loss


def test_equal_seeds_on_both_sides_are_resolved_not_infinitely_significant():
    """sd 0 on both sides (every seed the same score): the metric's resolution stands in for the sd."""
    runs = [
        _record(i, heads, seed, value)
        for i, (heads, seed, value) in enumerate([(1, 0, 1.0), (1, 1, 1.0), (2, 0, 0.999), (2, 1, 0.999)])
    ]
    groups = compare_groups(runs, "validation_exact_match")
    assert groups[1].verdict == TIED  # a difference of one resolution step is not a finding


def _write_run(folder, overrides, metrics):
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(json.dumps(overrides))
    summary = {"status": "completed", "metrics": metrics, "parameters": 10, "wall_time_s": 1.0}
    (folder / "summary.json").write_text(json.dumps(summary))


def test_tx_compare_prints_groups_and_writes_csv_json_and_plot(tmp_path, capsys):
    values = {1: [0.90, 0.91, 0.92], 2: [0.50, 0.52, 0.51], 4: [0.70]}
    job = 0
    for heads, seeds in values.items():
        for seed, value in enumerate(seeds):
            overrides = [f"model.num_heads={heads}", f"seed={seed}", "data.seed=0", "seeds=3"]
            _write_run(
                tmp_path / f"{job}_model.num_heads={heads},seed={seed}",
                overrides,
                {"validation_exact_match": value, "validation_loss": 1 - value},
            )
            job += 1
    result = main_here(compare.main, capsys, str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "7 runs in 3 groups" in result.stdout and "every group has data.seed=0" in result.stdout
    assert "0.9100 ± 0.0100" in result.stdout and "1 of 1 runs usable: no interval" in result.stdout
    with open(tmp_path / "groups.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["model.num_heads"] for row in rows] == ["1", "2", "4"]  # the lone run last, never ranked
    assert rows[0]["verdict"] == BEST and rows[1]["verdict"] == WORSE and rows[2]["verdict"] == "not tested"
    assert rows[1]["minus best [95% interval]"].startswith("-0.4000 [")
    document = json.loads((tmp_path / "groups.json").read_text())
    worst = document["groups"][1]
    assert worst["metrics"]["validation_exact_match"]["n"] == 3
    assert worst["against_best"]["p_holm"] < 0.05
    assert "seeds" not in worst["setting"] and "seed" not in worst["setting"]
    assert (tmp_path / "validation_exact_match_by_group.png").stat().st_size > 1000


def test_the_end_of_sweep_table_groups_seeds(tmp_path, capsys):
    from omegaconf import OmegaConf

    from tx_keras.launch.sweep_report import SweepReport

    for job, (heads, seed, value) in enumerate([(1, 0, 0.9), (1, 1, 0.92), (2, 0, 0.5), (2, 1, 0.52)]):
        overrides = [f"model.num_heads={heads}", f"seed={seed}", "seeds=2"]
        _write_run(
            tmp_path / f"{job}_model.num_heads={heads},seed={seed}",
            overrides,
            {"validation_exact_match": value},
        )
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}, "trainer": {}})
    SweepReport().on_multirun_end(config)
    lines = capsys.readouterr().err.splitlines()
    start = lines.index("tx-train: by setting (2 groups; Welch on every pair, Holm-corrected):")
    assert lines[start + 3].split()[1:9] == ["1", "1", "2", "of", "2", "0", "0.9100", "±"]
    assert lines[start + 4].endswith("worse than the best") and "0.5100 ± 0.0141" in lines[start + 4]
    assert "tx-train: sweep" in lines[-2]


def test_each_group_of_seeds_is_one_hparams_session_with_mean_sd_and_n(tmp_path):
    from tensorboard.backend.event_processing import event_accumulator
    from tensorboard.plugins.hparams import metadata as hparams_metadata
    from tensorboard.util import tensor_util

    from tx_keras.comparison.group_hparams import write_group_sessions

    runs = [
        _record(i, heads, seed, value)
        for i, (heads, seed, value) in enumerate([(1, 0, 0.9), (1, 1, 0.8), (2, 0, 0.5)])
    ]
    groups = compare_groups(runs, "validation_exact_match")
    folder = write_group_sessions(tmp_path, groups, ["validation_exact_match"])
    sessions = sorted(path.name for path in folder.iterdir() if path.is_dir())
    assert sessions == ["1_data.seed=0,model.num_heads=1"]  # the lone run is its own row already
    events = event_accumulator.EventAccumulator(
        str(folder / sessions[0]), size_guidance={event_accumulator.TENSORS: 0}
    )
    events.Reload()

    def scalar(tag):
        return float(tensor_util.make_ndarray(events.Tensors(tag)[-1].tensor_proto))

    assert scalar("final/validation_exact_match") == pytest.approx(0.85)
    assert scalar("group/validation_exact_match_sd") == pytest.approx(0.0707107, rel=1e-5)
    assert scalar("group/runs") == 2
    assert "_hparams_/session_start_info" in events.Tags()["tensors"]
    content = events.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    start = hparams_metadata.parse_session_start_info_plugin_data(content)
    assert start.hparams["status"].string_value == "group of 2 seeds, sd validation_exact_match 0.07071"
    assert start.hparams["model.num_heads"].string_value == "1" and "seed" not in start.hparams
    write_group_sessions(tmp_path, groups, ["validation_exact_match"])  # a second tx-compare replaces it
    assert len(list((folder / sessions[0]).glob("events.out.tfevents.*"))) == 1


def test_a_group_with_a_long_setting_gets_a_session_folder_a_file_system_accepts(tmp_path):
    """A preset's decision (a corpus path, a budget, ten knobs) names a group past 255 bytes: its session
    folder is cut as a sweep's job folders are, and two such groups keep folders of their own."""
    from tx_keras.comparison.group_hparams import write_group_sessions

    long = {f"model.knob_{i}": "0.0" + "9" * 20 for i in range(12)}
    runs = [
        RunRecord(
            f"{job}_x",
            Path("no_folder") / str(job),
            {**long, "data.path": path, "seed": str(seed)},
            "completed",
            metrics={"validation_bleu": value},
        )
        for job, (path, seed, value) in enumerate(
            [
                ("/a/eng-fra.tsv", 0, 40.0),
                ("/a/eng-fra.tsv", 1, 41.0),
                ("/b/eng-fra.tsv", 0, 38.0),
                ("/b/eng-fra.tsv", 1, 38.5),
            ]
        )
    ]
    assert len(",".join(f"{k}={v}" for k, v in runs[0].overrides.items()).encode()) > 255
    folder = write_group_sessions(tmp_path, compare_groups(runs, "validation_bleu"), ["validation_bleu"])
    sessions = sorted(path.name for path in folder.iterdir() if path.is_dir())
    assert [name[:2] for name in sessions] == ["1_", "2_"]
    assert all(len(name.encode()) <= 200 and "/" not in name for name in sessions)
    assert all(list((folder / name).glob("events.out.tfevents.*")) for name in sessions)


def _job(folder, overrides, value, status="completed"):
    """A job folder as tx-train leaves it, with `status` and the metric (none unless completed)."""
    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "overrides.yaml").write_text(json.dumps(overrides))
    metrics = {"validation_exact_match": value} if status == "completed" else {}
    (folder / "summary.json").write_text(json.dumps({"status": status, "metrics": metrics}))


def test_a_group_with_one_usable_run_of_three_is_shown_never_crowned_or_tested(tmp_path, capsys):
    """lr 1e-2: 2 of 3 seeds diverged, the one left scores 0.95; lr 1e-3: 3 seeds at ~0.80. The lone run
    must not be crowned best, nor leave the 3-seed group untested; its diverged runs are counted."""
    from tx_keras.comparison.sweep_runs import collect_runs

    cells = [("1e-2", 0, 0.95, "completed"), ("1e-2", 1, None, "diverged"), ("1e-2", 2, None, "diverged")]
    cells += [("1e-3", seed, value, "completed") for seed, value in enumerate((0.80, 0.81, 0.79))]
    cells += [("3e-3", seed, value, "completed") for seed, value in enumerate((0.60, 0.62, 0.61))]
    for job, (lr, seed, value, status) in enumerate(cells):
        _job(
            tmp_path / f"{job}_lr={lr},seed={seed}",
            [f"trainer.learning_rate={lr}", f"seed={seed}"],
            value,
            status,
        )
    groups = compare_groups(collect_runs(tmp_path, nested=True), "validation_exact_match")
    by_lr = {dict(g.setting)["trainer.learning_rate"]: g for g in groups}
    assert groups[0] is by_lr["1e-3"] and by_lr["1e-3"].verdict == BEST
    assert by_lr["3e-3"].verdict == WORSE  # tested against the real best
    lone = by_lr["1e-2"]
    assert groups[-1] is lone and lone.verdict == NO_TEST and lone.against_best is None
    assert (lone.count, lone.diverged) == ("1 of 3", 2)
    result = main_here(compare.main, capsys, str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("3 ") and "1e-2" in line)
    assert "1 of 3" in line and "not tested" in line and line.split()[5] == "2"  # the diverged column


def test_runs_of_two_sweeps_under_one_parent_are_not_pooled_unless_asked(tmp_path, capsys):
    """A `heads` sweep and a `claim_heads` sweep with the same override under outputs/sweeps: two groups
    of 3, not one of 6; --pool-sweeps pools them."""
    from tx_keras.comparison.sweep_runs import collect_runs

    for sweep, base in (("heads/2026-12-01_10-00-00", 0.90), ("claim_heads/2026-12-02_10-00-00", 0.20)):
        for seed in range(3):
            folder = tmp_path / "sweeps" / sweep / f"{seed}_model.num_heads=4,seed={seed}"
            _job(folder, ["model.num_heads=4", f"seed={seed}"], base + 0.01 * seed)
    runs = collect_runs(tmp_path, nested=True)
    apart = compare_groups(runs, "validation_exact_match")
    assert [g.summary.n for g in apart] == [3, 3]
    assert [dict(g.setting)["sweep"] for g in apart] == [
        "sweeps/heads/2026-12-01_10-00-00",
        "sweeps/claim_heads/2026-12-02_10-00-00",
    ]
    assert apart[1].verdict == WORSE
    pooled = compare_groups(runs, "validation_exact_match", pool_sweeps=True)
    assert [g.summary.n for g in pooled] == [6]
    result = main_here(compare.main, capsys, str(tmp_path), "--pool-sweeps", "--metric", "test_bleu")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "tx-compare: note: choices belong to validation; test_bleu reports the one chosen" in result.stdout


def test_all_groups_equal_at_n5_k5_no_group_is_called_worse(tmp_path):
    """Five settings drawn from one distribution, 5 seeds each, as run folders: every group but the best
    is "cannot be told from the best", each with the difference and its interval, which covers 0."""
    from tx_keras.comparison.sweep_runs import collect_runs

    rng = np.random.default_rng(5)
    for setting in range(5):
        for seed in range(5):
            folder = tmp_path / f"{setting * 5 + seed}_d={setting},seed={seed}"
            _job(folder, [f"model.dff={setting}", f"seed={seed}"], float(rng.normal(0.8, 0.01)))
    groups = compare_groups(collect_runs(tmp_path, nested=True), "validation_exact_match")
    assert [g.verdict for g in groups] == [BEST] + [TIED] * 4
    assert all(g.pairs == 10 and g.against_best.low < 0 < g.against_best.high for g in groups[1:])


def _false_worse_rate(k, n, reps, seed=0):
    """The share of simulated sweeps (k equal groups, n runs each, normal noise) in which some group is
    called worse than the best: Welch's p of every pair (scipy, vectorised over the sweeps) through
    tx-compare's own decision, `against_best` (the best picked from the same data, Holm over all pairs)."""
    from itertools import combinations

    from tx_keras.comparison.groups import ALPHA, against_best

    values = np.random.default_rng(seed).standard_normal((reps, k, n))
    order = np.argsort(-values.mean(axis=2), axis=1)  # best first, as compare_groups ranks them
    ranked = np.take_along_axis(values, order[:, :, None], axis=1)
    pairs = list(combinations(range(k), 2))
    first = ranked[:, [j for _, j in pairs], :]
    second = ranked[:, [i for i, _ in pairs], :]
    p = stats.ttest_ind(first, second, axis=2, equal_var=False).pvalue  # (reps, pairs)
    worse = 0
    for row in p:
        corrected = against_best(k, dict(zip(pairs, row, strict=True)))
        worse += any(value < ALPHA for value in corrected.values())
    return worse / reps


@pytest.fixture
def quick_holm(monkeypatch):
    """statsmodels' multipletests runs gc.collect() on every call (~0.2 s here): off for the simulation."""
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.mark.parametrize(("k", "n", "reps"), [(5, 3, 4000), (5, 10, 4000), (16, 3, 2000), (16, 10, 2000)])
def test_the_false_worse_rate_with_all_groups_equal_is_at_most_5_percent(k, n, reps, quick_holm):
    """Holm over all pairs bounds the chance of any false 'worse' at 5 %, whichever group was best; the
    tolerance is two binomial standard errors of the simulation at 5 %."""
    tolerance = 2 * math.sqrt(0.05 * 0.95 / reps)
    assert _false_worse_rate(k, n, reps) <= 0.05 + tolerance


@pytest.mark.slow
@pytest.mark.parametrize(("k", "n"), [(5, 3), (5, 5), (5, 10), (16, 3), (16, 10)])
def test_the_false_worse_rate_at_more_repetitions(k, n, quick_holm):
    assert _false_worse_rate(k, n, 20_000, seed=1) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 20_000)


def test_the_grouped_example_of_the_sweeps_page():
    """docs/sweeps.md: 1 head 2.5594 ± 0.0434, 4 heads 2.6002 ± 0.0384 (3 seeds each), by validation loss."""
    from tx_keras.comparison.welch import values_of

    runs = [
        _record(3 * i + seed, heads, seed, float(value), metric="validation_loss")
        for i, (heads, mean, sd) in enumerate([(1, 2.5594, 0.0434), (4, 2.6002, 0.0384)])
        for seed, value in enumerate(values_of(mean, sd, 3))
    ]
    best, other = compare_groups(runs, "validation_loss")
    assert best.verdict == BEST and other.verdict == TIED
    assert other.against_best.interval_text() == "+0.0408 [-0.0526, +0.1342]"
    assert other.p_holm == pytest.approx(0.29, abs=0.005) and other.against_best.hedges_g == pytest.approx(
        0.80, abs=0.005
    )
    sds = sorted((best.summary.sd, other.summary.sd))  # "between the two groups' seed-to-seed sds"
    assert sds[0] < other.against_best.difference < sds[1]
