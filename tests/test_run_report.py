"""The end-of-run report of a real tiny run: paths that exist, the scores summary.json holds."""

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from tx_keras.runtime.cpu_share import CpuShare
from tx_keras.training.run.report import headline_metrics, run_report


def _report(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("tx-train: run "))
    return lines[start:]


def test_report_names_the_folder_the_scores_and_the_next_commands(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    report = _report(result.stdout)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert 5 <= len(report) <= 12, report
    cwd = run_dir.parent  # where tx-train ran: paths are printed relative to it, ready to type
    assert report[0] == "tx-train: run completed: run"
    (scores,) = [line for line in report if line.startswith("  scores:")]
    shown = dict(re.findall(r"(\w+) (-?[\d.]+)", scores))
    assert shown and set(shown) <= set(summary["metrics"])
    assert set(shown) == set(list(headline_metrics(summary["metrics"]))[: len(shown)])
    for name, text in shown.items():
        assert float(text) == round(summary["metrics"][name], 4), name
    trained = next(line for line in report if line.startswith("  trained:"))
    assert "2 of 2 epochs in " in trained
    # tx-train cuts the step into two row parts on 2 cores (training/step/step_threads.py), else one
    assert summary["step_parts"] == (2 if len(os.sched_getaffinity(0)) == 2 else 1)
    parts = f", each step's rows in {summary['step_parts']} parts side by side" * (summary["step_parts"] > 1)
    steps = f", {summary['optimizer_steps']:,} optimizer steps in {summary['precision']}{parts};"
    assert steps in trained
    (export,) = [line for line in report if line.startswith("  export:")]
    assert cwd / export.split(maxsplit=1)[1] == run_dir / summary["export"]
    assert (run_dir / summary["export"] / "saved_model.pb").is_file()
    assert "  next:    tx-board run" in report
    (translate,) = [shlex.split(line) for line in report if "tx-translate" in line]
    assert translate[:2] == ["tx-translate", "run"] and translate[2] == summary["example_source"]


def test_report_is_in_train_log_too(tiny_run):
    result, run_dir = tiny_run
    log = (run_dir / "train.log").read_text()
    for line in _report(result.stdout):
        assert line in log


def test_failed_run_report_gives_the_reason_and_the_log():
    summary = {"status": "failed", "reason": "ValueError: boom", "metrics": {}, "epochs": 1}
    lines = run_report(summary, Path("/nowhere/run"))
    assert lines[0] == "tx-train: run failed: /nowhere/run"
    assert "  reason:  ValueError: boom" in lines and lines[-1] == "  log:     /nowhere/run/train.log"


def test_summary_and_report_say_how_many_cores_training_kept_busy(tiny_run):
    result, run_dir = tiny_run
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["cores"] == len(os.sched_getaffinity(0))
    # every thread's user + kernel time over fit's wall time: positive, and no more than the cores allow
    assert 0 < summary["cpu_per_wall"] <= summary["cores"] * 1.05
    cpu_per_wall = summary["train_cpu_s"] / summary["train_time_s"]
    assert summary["cpu_per_wall"] == pytest.approx(cpu_per_wall, rel=0.02)
    trained = next(line for line in _report(result.stdout) if line.startswith("  trained:"))
    assert f"of training ({summary['cpu_per_wall']:.2f} of {summary['cores']} cores busy)" in trained


def test_cpu_share_is_cpu_seconds_over_wall_seconds():
    share = CpuShare(wall_s=10.0, user_s=15.0, system_s=3.0, cores=2)
    assert share.cpu_per_wall == pytest.approx(1.8) and share.kernel_share == pytest.approx(1 / 6)
    assert share.fields() == {"train_cpu_s": 18.0, "cpu_per_wall": 1.8, "cores": 2}
    assert CpuShare(0.0, 0.0, 0.0, 2).cpu_per_wall == 0.0 and CpuShare(1.0, 0.0, 0.0, 2).kernel_share == 0.0
