"""tx-claims on hand-made claim sweep folders: report.md with tables, verdicts and plots; one-line errors."""

import json
import subprocess
import sys

import pytest
import tensorflow as tf

from tests.conftest import main_here
from tx_keras.cli.claims import main

CONFIG = {"seed": 0, "data": {"length": 12, "num_train": 640}, "trainer": {"batch_size": 64}}


def write_job(
    sweep_dir, number, claim, knobs, seed, metrics, status="completed", curve=None, diagnostics=None
):
    """One job folder as `tx-train sweep=claim_<claim>` leaves it: .hydra/overrides.yaml, summary.json and,
    when given, the validation accuracy per epoch and the diagnostics at step 0 as event files."""
    overrides = [f"{key}={value}" for key, value in knobs.items()] + [f"seed={seed}"]
    job = sweep_dir / f"{number}_{','.join(overrides)}"
    (job / ".hydra").mkdir(parents=True)
    lines = [f"- sweep=claim_{claim}"] + [f"- {item}" for item in overrides]
    (job / ".hydra" / "overrides.yaml").write_text("\n".join(lines) + "\n")
    summary = {"status": status, "metrics": metrics, "wall_time_s": 10.0 + number, "config": CONFIG}
    (job / "summary.json").write_text(json.dumps(summary))
    if curve:
        with tf.summary.create_file_writer(str(job / "validation")).as_default():
            for epoch, value in enumerate(curve):  # Keras counts epochs from 0
                tf.summary.scalar("epoch_accuracy", value, step=epoch)
    if diagnostics:
        with tf.summary.create_file_writer(str(job / "diagnostics")).as_default():
            for tag, value in diagnostics.items():
                tf.summary.scalar(tag, value, step=0)
                tf.summary.scalar(tag, value * 100, step=1)  # after an epoch: must not be read
    return job


def attention_sweep(root, on=(0.99, 0.98, 1.0), off=(0.13, 0.14, 0.135), stamp="2026-12-07_10-00-00"):
    sweep = root / "claim_attention" / stamp
    number = 0
    for attention, values in (("full", on), ("none", off)):
        for seed, value in enumerate(values):
            write_job(
                sweep,
                number,
                "attention",
                {"model.attention": attention},
                seed,
                {"validation_accuracy": value},
            )
            number += 1
    return sweep


def test_attention_report_has_the_question_the_table_the_verdict_and_a_plot(tmp_path, capsys):
    sweep = attention_sweep(tmp_path)
    # One more seed of `none` that failed: left out of the mean, counted in the table.
    write_job(sweep, 6, "attention", {"model.attention": "none"}, 3, {}, status="failed")
    out = tmp_path / "report"
    main([str(sweep), "--out", str(out)])
    printed = capsys.readouterr().out
    assert printed.startswith(f"tx-claims: attention: 1 sweep(s) found: {sweep.name} (judged)\n")
    assert "\nattention: holds: token accuracy with attention 0.990 ± 0.010, without 0.135 ± 0.005" in printed
    report = (out / "report.md").read_text()
    assert "| Attention gives context | **holds** |" in report
    assert "## 1. Attention gives context: holds" in report
    assert "**Question.** Does a model need attention to use the other positions of its input?" in report
    assert (
        "| attention | seeds | validation_accuracy (mean ± sd) | diverged | failed or unfinished |" in report
    )
    assert "| full | 3 | 0.990 ± 0.010 | 0 | 0 | 11 |" in report
    assert "| none | 3 | 0.135 ± 0.005 | 0 | 1 | 14 |" in report  # wall time: the failed run's too
    assert "![validation token accuracy per setting" in report
    assert (out / "attention_validation_accuracy.png").stat().st_size > 5000
    assert "Command: `tx-train sweep=claim_attention`; read from" in report


def test_a_claim_on_a_corpus_shows_the_corpus_in_its_command(tmp_path, capsys):
    sweep = tmp_path / "claim_heads_text" / "2026-12-07_10-00-43"
    for number, (heads, seed) in enumerate((h, s) for h in (1, 8, 32) for s in range(3)):
        chrf = {1: 37.0, 8: 38.0, 32: 34.0}[heads] + seed / 2
        metrics = {"validation_chrf": chrf, "validation_bleu": chrf / 2}
        write_job(sweep, number, "heads_text", {"model.num_heads": heads}, seed, metrics)
    main([str(sweep), "--out", str(tmp_path / "report")])
    # 38.50 ± 0.50 against 37.50 ± 0.50: one-sided Welch p 0.035 (two-sided 0.07, inconclusive before)
    assert "\nheads_text: holds: validation chrF 8 heads 38.50" in capsys.readouterr().out
    report = (tmp_path / "report" / "report.md").read_text()
    assert "(head_importance.md). Command: `tx-train sweep=claim_heads_text data.path=FILE`; read" in report


def test_a_sweeps_root_uses_the_newest_sweep_of_each_claim(tmp_path, capsys):
    attention_sweep(tmp_path, on=(0.2, 0.21, 0.2))  # an old sweep: superseded
    newer = attention_sweep(tmp_path, on=(0.99, 0.98, 1.0), stamp="2026-12-08_09-00-00")
    (tmp_path / "claim_attention" / "2026-12-09_00-00-00").mkdir()  # started, no runs yet: skipped
    main([str(tmp_path), "--out", str(tmp_path / "report")])
    printed = capsys.readouterr().out
    assert (
        "tx-claims: attention: 2 sweep(s) found: 2026-12-08_09-00-00 (judged), 2026-12-07_10-00-00\n"
        in printed
    )
    assert "attention: holds" in printed
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"| **holds** | `{newer}` | `2026-12-07_10-00-00` |" in report
    assert "(set 2026-12-06, before these runs)" in report and "runs of 2026-12-08)" in report


def test_runs_made_before_their_rule_give_an_exploratory_result_not_a_verdict(tmp_path, capsys):
    sweep = attention_sweep(tmp_path, stamp="2026-11-29_20-30-00")
    main([str(sweep), "--out", str(tmp_path / "report")])
    assert "\nattention: exploratory (rule set after the runs): holds: " in capsys.readouterr().out
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## 1. Attention gives context: exploratory (rule set after the runs): holds" in report
    assert "**Exploratory result: holds.**" in report and "(set 2026-12-06, not before these runs)" in report
    assert "3 usable seeds a setting" in report


def test_pick_judges_another_sweep_and_a_wrong_pick_is_one_line(tmp_path, capsys):
    old = attention_sweep(tmp_path, on=(0.2, 0.21, 0.2))
    attention_sweep(tmp_path, on=(0.99, 0.98, 1.0), stamp="2026-12-08_09-00-00")
    main([str(tmp_path), "--out", str(tmp_path / "report"), "--pick", f"attention={old.name}"])
    printed = capsys.readouterr().out
    assert "found: 2026-12-08_09-00-00, 2026-12-07_10-00-00 (judged)" in printed
    assert "attention: inconclusive: token accuracy with attention 0.203" in printed  # the old sweep
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path), "--out", str(tmp_path / "report"), "--pick", "attention=nope"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "tx-claims: error: --pick attention=...: no such sweep with runs; found: 2026-12-08_09-00-00, "
        "2026-12-07_10-00-00\n"
    )


def test_heads_report_reads_the_steps_to_099_from_the_curves(tmp_path, capsys):
    sweep = tmp_path / "heads"
    # 640 rows / batch 64 = 10 steps per epoch: 1 head reaches 0.99 after epoch 5, 4 heads after epoch 2.
    curves = {1: [0.5, 0.8, 0.9, 0.95, 0.991, 0.995], 4: [0.6, 0.992, 0.995, 0.997, 0.998, 0.999]}
    number = 0
    for heads, curve in curves.items():
        for seed in range(3):
            shifted = curve[seed % 2 :] + [curve[-1]] * (seed % 2)  # seed 1 gets there an epoch sooner
            write_job(
                sweep,
                number,
                "heads",
                {"model.num_heads": heads},
                seed,
                {"validation_accuracy": shifted[-1]},
                curve=shifted,
            )
            number += 1
    out = tmp_path / "report"
    main([str(sweep), "--out", str(out)])
    assert "heads: holds: both reach 0.99 on every seed; steps to 0.99: 1 head 47 ± 6, 4 heads 17 ± 6" in (
        capsys.readouterr().out
    )  # 30 steps apart, 3 epochs of 10 steps: significant at one epoch's resolution too
    report = (out / "report.md").read_text()
    assert "| 1 | 3 | 0.995 ± 0.000 | 0 | 0 | 47 ± 6 (3 of 3 reached) |" in report
    assert (out / "heads_curves.png").exists()


def test_residual_report_plots_the_diagnostics_at_initialisation(tmp_path, capsys):
    sweep = tmp_path / "claim_residual" / "x"
    number = 0
    for depth in (2, 4):
        for residual, accuracy in (("true", 0.99), ("false", 0.2)):
            for seed in range(2):
                grads = {f"gradient_norm/encoder/layer_{i}": 0.1 * i for i in range(1, depth + 1)}
                ranks = {f"rank_collapse/decoder/layer_{i}": 0.5 / i for i in range(1, depth + 1)}
                write_job(
                    sweep,
                    number,
                    "residual",
                    {"model.num_encoder_layers": depth, "model.norm": "post", "model.residual": residual},
                    seed,
                    {"validation_accuracy": accuracy + 0.001 * seed},
                    diagnostics={**grads, **ranks},
                )
                number += 1
    out = tmp_path / "report"
    main([str(sweep), "--out", str(out)])
    assert (
        "residual: holds: 4 layers, post-LN: with the Add 0.990 ± 0.001, without 0.201 ± 0.001"
        in capsys.readouterr().out
    )
    report = (out / "report.md").read_text()
    assert "![gradient norm at initialisation per layer" in report
    assert (out / "residual_gradient_norm.png").exists() and (out / "residual_rank_collapse.png").exists()


def test_diagnostics_are_read_at_step_0_only(tmp_path):
    from tx_keras.claims.claim_runs import diagnostics_by_line, load_runs

    sweep = tmp_path / "s"
    for seed, scale in enumerate((1.0, 3.0)):
        write_job(
            sweep,
            seed,
            "residual",
            {"model.num_encoder_layers": 2, "model.residual": "true"},
            seed,
            {"validation_accuracy": 1.0},
            diagnostics={"gradient_norm/encoder/layer_1": scale},
        )
    lines = diagnostics_by_line(load_runs(sweep), ("model.residual",), "gradient_norm")
    assert lines == {(("model.residual", "true"),): {"encoder/layer_1": pytest.approx(2.0)}}


@pytest.mark.parametrize(
    ("make", "message", "fresh"),
    [
        (lambda root: root / "missing", "{root}/missing is not a folder", True),
        (
            lambda root: (root / "empty").mkdir() or root / "empty",
            "{root}/empty holds no tx-train runs and no claim_<name>/ sweep folders with runs",
            False,
        ),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(tmp_path, capsys, make, message, fresh):
    """The first in a fresh process, as a user meets it; the second through `main` in this process."""
    folder = make(tmp_path)
    if fresh:
        result = subprocess.run(
            [sys.executable, "-m", "tx_keras.cli.claims", str(folder)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        code, stderr = result.returncode, result.stderr
    else:
        result = main_here(main, capsys, str(folder))
        code, stderr = result.returncode, result.stderr
    assert code == 2
    assert stderr == f"tx-claims: error: {message.format(root=tmp_path)}\n"


def test_a_sweep_of_no_claim_is_refused(tmp_path, capsys):
    job = tmp_path / "sweep" / "0_model.num_heads=1"
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text("- model.num_heads=1\n")
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "sweep")])
    assert exit_info.value.code == 2
    expected = f"{tmp_path / 'sweep'} is not a claim sweep (run one with tx-train sweep=claim_<name>)"
    assert capsys.readouterr().err == f"tx-claims: error: {expected}\n"


def test_a_report_run_prints_nothing_on_stderr(tmp_path):
    """TensorFlow's start-up lines (CUDA probing on a CPU) stay off the terminal, as in tx-train."""
    sweep = attention_sweep(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.claims", str(sweep), "--out", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "\nattention: holds: " in result.stdout
    assert result.stderr == ""
