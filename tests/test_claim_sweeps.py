"""The claim sweeps end to end at toy size: tx-train sweep=claim_<name>, then tx-claims on the folder."""

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_ind

from tests.ahead import ahead_fixture
from tests.conftest import tx_train
from tx_keras.cli.claims import main

TOY = [
    "model=tiny",
    "trainer.epochs=1",
    "data.num_train=128",
    "data.num_validation=16",
    "data.num_test=16",
    "trainer.checkpoint_every=0",
]


def _claims(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.claims", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _summaries(sweep_dir):
    return {path.parent.name: json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")}


def _attention_sweep_dir(root):
    return root / "outputs" / "sweeps" / "claim_attention" / "toy"


@ahead_fixture
def attention_claim_sweep(root):
    """The sweep of the test below, started ahead (tests/ahead.py): (its result, the folder it ran in)."""
    # Two seeds instead of three keep this test short; the rules need two.
    overrides = [*TOY, "seed=0,1", f"hydra.sweep.dir={_attention_sweep_dir(root)}"]
    return tx_train("sweep=claim_attention", *overrides, cwd=root), root


def _expected_attention(on, off):
    """The attention rule decided by hand from the runs' values (scipy and statsmodels, not the suite's
    verdict code): (outcome, Welch one-sided p)."""
    sd_on, sd_off = (max(float(np.std(side, ddof=1)), 0.001) for side in (on, off))
    p = stats.ttest_ind_from_stats(
        np.mean(on), sd_on, len(on), np.mean(off), sd_off, len(off), equal_var=False, alternative="greater"
    ).pvalue
    floor, top = (12 * 0.08 + 1) / 13, (12 * 0.95 + 1) / 13
    if np.mean(on) < floor:
        return "inconclusive (nothing learned)", p
    if p < 0.05:
        return ("holds" if np.mean(off) <= floor and np.mean(on) >= top else "inconclusive"), p
    if np.mean(off) < floor:
        return "inconclusive (nothing learned)", p
    spread_on, spread_off = (np.mean(side) + np.array([-sd, sd]) for side, sd in ((on, sd_on), (off, sd_off)))
    tost = ttost_ind(spread_on, spread_off, -0.05, 0.05, usevar="unequal")[0]
    return ("does not hold" if tost < 0.05 else "inconclusive"), p


@pytest.mark.slow  # a 4-job sweep, ~2 CPU-minutes; test_claim_verdicts keeps every verdict by default
def test_the_attention_claim_from_sweep_to_report(attention_claim_sweep, monkeypatch, capsys):
    result, root = attention_claim_sweep
    sweep_dir = _attention_sweep_dir(root)
    assert result.returncode == 0, result.stderr[-2000:]
    summaries = _summaries(sweep_dir)
    jobs = sorted((s["config"]["model"]["attention"], s["config"]["seed"]) for s in summaries.values())
    assert jobs == [(attention, seed) for attention in ("full", "none") for seed in range(2)]
    assert {s["status"] for s in summaries.values()} == {"completed"}
    assert {s["config"]["data"]["name"] for s in summaries.values()} == {"reverse"}
    values = {
        attention: [
            s["metrics"]["validation_accuracy"]
            for s in summaries.values()
            if s["config"]["model"]["attention"] == attention
        ]
        for attention in ("full", "none")
    }
    outcome, p = _expected_attention(values["full"], values["none"])
    monkeypatch.chdir(root)
    main([])  # in this process (TensorFlow is loaded already); defaults: outputs/sweeps -> outputs/claims
    printed = capsys.readouterr().out
    assert f"\nattention: {outcome}: token accuracy with attention " in printed
    report = (root / "outputs" / "claims" / "report.md").read_text()
    assert f"## 1. Attention gives context: {outcome}\n" in report
    for attention, seeds in values.items():
        cell = f"{np.mean(seeds):.3f} ± {np.std(seeds, ddof=1):.3f}"
        assert f"| {attention} | 2 | {cell} | 0 | 0 |" in report  # the table: the runs' own numbers
    difference = np.mean(values["full"]) - np.mean(values["none"])
    assert f"difference {difference:+.3f} [" in report and f"Welch one-sided p {p:.2g}," in report
    assert "2 usable seeds a setting" in report and "power at n 2:" in report
    assert (root / "outputs" / "claims" / "attention_validation_accuracy.png").exists()


@pytest.mark.slow
def test_the_residual_claim_logs_the_diagnostics_the_report_plots(tmp_path):
    sweep_dir = tmp_path / "claim_residual"
    overrides = [
        *TOY,
        "data.length=6",
        "data.min_length=6",
        "model.num_encoder_layers=1,2",
        "model.norm=post",
    ]
    result = tx_train("sweep=claim_residual", *overrides, f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(_summaries(sweep_dir)) == 2 * 2 * 3
    claims = _claims(str(sweep_dir), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert claims.returncode == 0, claims.stderr[-2000:]
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## 1. Add (residual) lets deep stacks train: " in report
    for name in ("residual_gradient_norm.png", "residual_rank_collapse.png"):
        assert (tmp_path / "report" / name).stat().st_size > 5000
