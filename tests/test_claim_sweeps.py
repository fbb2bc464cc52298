"""The claim sweeps end to end at toy size: tx-train sweep=claim_<name>, then tx-claims on the folder."""

import json
import subprocess
import sys

import pytest

from tests.ahead import job
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


@job("attention_claim_sweep")
def _attention_claim_sweep(root):
    # Two seeds instead of three keep this test short; the rules need two.
    overrides = [*TOY, "seed=0,1", f"hydra.sweep.dir={_attention_sweep_dir(root)}"]
    return tx_train("sweep=claim_attention", *overrides, cwd=root), root


@pytest.fixture
def attention_claim_sweep(ahead):
    """The sweep of the test below, started ahead (tests/ahead.py): (its result, the folder it ran in)."""
    return ahead.result("attention_claim_sweep")


def test_the_attention_claim_from_sweep_to_report(attention_claim_sweep, monkeypatch, capsys):
    result, root = attention_claim_sweep
    sweep_dir = _attention_sweep_dir(root)
    assert result.returncode == 0, result.stderr[-2000:]
    summaries = _summaries(sweep_dir)
    jobs = sorted((s["config"]["model"]["attention"], s["config"]["seed"]) for s in summaries.values())
    assert jobs == [(attention, seed) for attention in ("full", "none") for seed in range(2)]
    assert {s["status"] for s in summaries.values()} == {"completed"}
    assert {s["config"]["data"]["name"] for s in summaries.values()} == {"reverse"}
    monkeypatch.chdir(root)
    main([])  # in this process (TensorFlow is loaded already); defaults: outputs/sweeps -> outputs/claims
    assert "\nattention: " in capsys.readouterr().out  # after the line listing the sweeps found
    report = (root / "outputs" / "claims" / "report.md").read_text()
    assert "## 1. Attention gives context: " in report
    rows = [line for line in report.splitlines() if line.startswith(("| full | 2 |", "| none | 2 |"))]
    assert len(rows) == 2
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
