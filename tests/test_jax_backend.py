"""`trainer.backend=jax`: the pieces a TensorFlow run uses work on JAX, and checkpoints move between backends.

Keras picks its backend once per process, and this test process runs TensorFlow: the JAX side runs in a
process of its own (`python -m tests.test_jax_backend`, below), started with KERAS_BACKEND=jax.
The whole-run tests (tx-train on one backend, resumed on the other; a JAX run's export) are slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from tests.conftest import TINY, tx_train
from tests.event_points import event_points
from tests.float_tolerance import FLOAT32

ROWS = 4  # the batch whose logits and gradient norms both sides compare
CLASSES, TOKENS = 2, 96  # bucketed batches in shape classes: trainer.shape_classes, trainer.batch_tokens


def _small_model():
    """A 1+1-layer Transformer on a short copy task, compiled as tx-train compiles (with a cool-down, whose
    factor must be training state on JAX), its weights and optimizer slots made. Returns (model, task);
    the schedule is `model.schedule`."""
    from tx_keras.data import build_task
    from tx_keras.models import ModelConfig, Transformer
    from tx_keras.training.step.model_compile import compile_model
    from tx_keras.training.trainer_config import TrainerConfig

    keras.utils.set_random_seed(0)
    task = build_task(
        {"name": "copy", "seed": 0, "vocab_size": 8, "length": 6, "min_length": 3}
        | {"num_train": 128, "num_validation": 8, "num_test": 8}
    )
    config = ModelConfig(
        num_encoder_layers=1, num_decoder_layers=1, d_model=16, num_heads=2, dff=32, dropout=0.0
    )
    model = Transformer(config, len(task.source_vocab), len(task.target_vocab), 6 + 1, 6 + 1)
    trainer = TrainerConfig(schedule="noam", warmup_steps=4, lr_scale=0.5, clip_norm=None, cooldown=0.5)
    model.schedule = compile_model(model, trainer)
    source, target = task.splits["train"]
    model((source[:1], target[:1, :-1]))
    model.optimizer.build(model.trainable_variables)
    return model, task


def _batch(task):
    source, target = task.splits["train"]
    return (source[:ROWS], target[:ROWS, :-1]), target[:ROWS, 1:]


def _train_one_epoch(model, task, epoch: int, planned_steps: int | None, batches: int = 4) -> None:
    """Epoch `epoch` (0-based), its first `batches` batches, with the cool-down clock planning
    `planned_steps` (the factor falls over their second half; None: no clock, the factor stays)."""
    from tx_keras.data import make_dataset
    from tx_keras.training.callbacks.cooldown_clock import CooldownClock
    from tx_keras.training.callbacks.update_count import UpdateCount

    count = UpdateCount()
    clocks = [count, CooldownClock(model.schedule, None, count, 1, planned_steps)] if planned_steps else []
    dataset = make_dataset(*task.splits["train"], 32, shuffle=False).take(batches)
    model.fit(dataset, initial_epoch=epoch, epochs=epoch + 1, callbacks=clocks, verbose=0)


def _logits(model, task) -> np.ndarray:
    return keras.ops.convert_to_numpy(model(_batch(task)[0], training=False))


def _factor(model) -> float:
    return float(keras.ops.convert_to_numpy(model.schedule.factor))


def jax_side(checkpoint: Path, out: Path) -> None:
    """In a JAX process: restore the TensorFlow checkpoint, measure, train an epoch, checkpoint again."""
    from tx_keras.diagnostics import gradient_norms_by_layer
    from tx_keras.run_folder.checkpoint import load_checkpoint, restore, save_checkpoint

    assert keras.backend.backend() == "jax"
    model, task = _small_model()
    restore(model, load_checkpoint(checkpoint), checkpoint)
    restored = {
        "logits": _logits(model, task).tolist(),
        "norms": gradient_norms_by_layer(model, *_batch(task)),
        "step": int(keras.ops.convert_to_numpy(model.optimizer.iterations)),
    }
    # 5 planned steps: the factor is 1 while the step compiles (step 4), then 0.4, then 0: only step 5
    # moves the weights, by 0.4 of its rate. A factor outside the step's state would stay 1 in it.
    _train_one_epoch(model, task, 1, planned_steps=5)
    save_checkpoint(out / "jax.npz", model, 2, {"loss": 1.0})
    one_step, _ = _small_model()
    restore(one_step, load_checkpoint(checkpoint), checkpoint)
    one_step.schedule.factor.assign(0.4)
    _train_one_epoch(one_step, task, 1, planned_steps=None, batches=1)
    trained = {
        "logits": _logits(model, task).tolist(),
        "factor": _factor(model),
        "as_one_step": all(
            np.array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
            for a, b in zip(model.trainable_variables, one_step.trainable_variables, strict=True)
        ),
    }
    traces = _bucketed_traces(model, task)
    (out / "jax.json").write_text(json.dumps({"restored": restored, "trained": trained, "traces": traces}))


def _bucketed_shapes(task, classes: int | None, epochs: int = 2) -> set[tuple[int, int]]:
    """The (rows, width) shapes of `epochs` epochs of bucketed training batches."""
    from tx_keras.data.batching.length_batches import (
        batch_width,
        computed_rows,
        epoch_widths,
        length_batches,
        row_lengths,
    )

    source, target = task.splits["train"]
    lengths = np.maximum(row_lengths(source), row_lengths(target))
    widths = epoch_widths(lengths, classes)
    return {
        (computed_rows(rows, width, 32, TOKENS, classes), width)
        for epoch in range(epochs)
        for rows in length_batches(lengths, 32, TOKENS, 0, epoch, classes)
        for width in [int(batch_width(lengths[rows].max(), widths))]
    }


def _bucketed_traces(model, task) -> int:
    """Traces of a new compiled train step over two epochs of bucketed batches in shape classes: a jitted
    step's Python body runs once per trace (once per new input shape), so this counts XLA programs."""
    from tx_keras.data import make_dataset

    traces = []
    step = model.train_step
    model.train_step = lambda *args: traces.append(1) or step(*args)
    model.train_function = None  # made anew by the next fit, around the counting step
    settings = {"batching": "bucket", "batch_tokens": TOKENS, "shape_classes": CLASSES}
    model.fit(make_dataset(*task.splits["train"], 32, True, seed=0, **settings), epochs=2, verbose=0)
    return len(traces)


@pytest.mark.slow  # a run on each backend: ~49 s loaded
def test_a_checkpoint_moves_from_tensorflow_to_jax_and_back(tmp_path):
    """TensorFlow trains an epoch and checkpoints; JAX restores it (same logits and gradient norms), trains
    on (its cool-down clock setting the factor its compiled step reads) and checkpoints; TensorFlow
    restores that to JAX's logits. (Trained on both, the two would differ by more than float noise: Adam
    with epsilon 1e-9 turns last-bit gradient differences into whole-rate steps.) In the same JAX
    process, to spare a start: a bucketed fit in shape classes compiles one train step per class."""
    from tx_keras.diagnostics import gradient_norms_by_layer
    from tx_keras.run_folder.checkpoint import load_checkpoint, restore, save_checkpoint

    model, task = _small_model()
    _train_one_epoch(model, task, 0, planned_steps=None)
    save_checkpoint(tmp_path / "tf.npz", model, 1, {"loss": 1.0})
    environment = {**os.environ, "KERAS_BACKEND": "jax"}
    command = [sys.executable, "-m", "tests.test_jax_backend", str(tmp_path / "tf.npz"), str(tmp_path)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    jax = json.loads((tmp_path / "jax.json").read_text())

    restored = jax["restored"]
    assert restored["step"] == 4  # 128 pairs / 32: the schedule continues where TensorFlow stopped
    np.testing.assert_allclose(restored["logits"], _logits(model, task), **FLOAT32)
    norms = gradient_norms_by_layer(model, *_batch(task))
    assert set(restored["norms"]) == set(norms) and len(norms) == 5  # 2 embeddings, 2 blocks, logits
    for name, value in norms.items():
        assert restored["norms"][name] == pytest.approx(value, rel=1e-4), name

    trained = jax["trained"]
    assert trained["factor"] == 0.0 and trained["as_one_step"]  # the cool-down reached the compiled step
    # Bucketed batches in shape classes: one compiled step per class, reused in the second epoch, where
    # the exact buckets (short last batches) give more shapes.
    exact_shapes = len(_bucketed_shapes(task, None))
    assert jax["traces"] == len(_bucketed_shapes(task, CLASSES)) == CLASSES < exact_shapes
    back, _ = _small_model()
    restore(back, load_checkpoint(tmp_path / "jax.npz"), tmp_path / "jax.npz")
    assert int(keras.ops.convert_to_numpy(back.optimizer.iterations)) == 8
    assert _factor(back) == trained["factor"]
    np.testing.assert_allclose(_logits(back, task), trained["logits"], **FLOAT32)


def test_tx_export_refuses_in_one_line_in_a_process_that_runs_keras_on_jax(monkeypatch, capsys):
    """tx-export and tx-translate set KERAS_BACKEND=tensorflow for themselves; where Keras already runs
    on JAX (a notebook calling their `main`) they cannot, and say so."""
    from tx_keras.cli import command_parser
    from tx_keras.cli.export import _parser

    monkeypatch.setattr(command_parser, "running_backend", lambda: "jax")
    with pytest.raises(SystemExit) as exit_info:
        command_parser.use_tensorflow_backend(_parser())
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "tx-export: error: this process already runs Keras on jax; a SavedModel is TensorFlow's: run "
        "tx-export in a process of its own\n"
    )


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


ONE_EPOCH = [*TINY, "trainer.early_stopping.patience=null"]


@pytest.mark.slow  # two tiny runs, each an epoch on one backend and one on the other: ~8 min loaded
@pytest.mark.parametrize("first,second", [("tensorflow", "jax"), ("jax", "tensorflow")])
def test_tx_train_continues_a_run_on_the_other_backend(tmp_path, first, second):
    run_dir = tmp_path / "run"
    folder = f"hydra.run.dir={run_dir}"
    started = tx_train(*ONE_EPOCH, "trainer.epochs=1", f"trainer.backend={first}", folder, cwd=tmp_path)
    assert started.returncode == 0, started.stderr[-3000:]
    resumed = tx_train(*ONE_EPOCH, f"trainer.backend={second}", folder, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming {run_dir} after epoch 1 of 2" in resumed.stdout
    summary = _summary(run_dir)
    assert summary["status"] == "completed" and summary["epochs"] == 2
    assert summary["config"]["trainer"]["backend"] == second
    assert np.isfinite(summary["metrics"]["train_loss"])
    log = (run_dir / "train.log").read_text()  # both processes' allocator accounts: the JAX one says
    assert "allocator: TensorFlow's BFC pool for CPU tensors, glibc" in log  # what the pool holds there
    assert "allocator: TensorFlow's BFC pool for tf.data's CPU tensors (jax's arrays: XLA's own" in log


def jax_translations(run_dir: Path, out: Path) -> None:
    """In a JAX process: the run's model.keras decodes the first validation sentences with the export's
    beam settings, through the keras.ops decoders compiled for JAX; written to `out` as JSON."""
    from tx_keras.data import build_task
    from tx_keras.decoding.beam_search import beam_search_decoder
    from tx_keras.models import Transformer  # Keras finds the saved class once its module is imported

    assert keras.backend.backend() == "jax"
    summary = _summary(run_dir)
    task = build_task(summary["config"]["data"])
    source = task.splits["validation"][0][:TRANSLATED]
    model = keras.saving.load_model(run_dir / "model.keras", compile=False, safe_mode=True)
    assert isinstance(model, Transformer)
    export = summary["config"]["export"]
    width, alpha = export["beam_width"], export["length_penalty"]
    decode = beam_search_decoder(model, model.max_target_length, width, alpha)
    rows = keras.ops.convert_to_numpy(decode(source))
    texts = [text for text, _ in task.texts("validation")[:TRANSLATED]]
    out.write_text(json.dumps({"texts": texts, "translations": [task.detokenize_target(r) for r in rows]}))


TRANSLATED = 16


@pytest.mark.slow  # a tiny JAX run (evaluation, export in a TensorFlow process), tx-translate: >10 min loaded
def test_a_jax_run_exports_a_saved_model_that_translates_as_it_decoded(tmp_path):
    run_dir = tmp_path / "run"
    # float32: the export serves float32 weights, so both decode the same function (bf16 would not)
    overrides = ["trainer.backend=jax", "trainer.precision=float32", f"hydra.run.dir={run_dir}"]
    command = [sys.executable, "-m", "tx_keras.cli.train", *TINY, *overrides]
    # Longer than tx_train's 10 minutes: JAX compiles a greedy and a beam program per batch shape class.
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = _summary(run_dir)
    assert summary["status"] == "completed" and summary["config"]["trainer"]["backend"] == "jax"
    assert (run_dir / summary["export"] / "saved_model.pb").is_file()
    jax = {**os.environ, "KERAS_BACKEND": "jax"}
    command = [
        sys.executable,
        "-m",
        "tests.test_jax_backend",
        "translate",
        str(run_dir),
        str(tmp_path / "decoded.json"),
    ]
    decoded = subprocess.run(command, env=jax, capture_output=True, text=True, timeout=600)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    expected = json.loads((tmp_path / "decoded.json").read_text())
    command = [sys.executable, "-m", "tx_keras.cli.translate", str(run_dir), *expected["texts"]]
    # A fresh TensorFlow process, from a shell that says jax (a JAX run's): tx-translate sets its own.
    translated = subprocess.run(command, env=jax, capture_output=True, text=True, timeout=600)
    assert translated.returncode == 0, translated.stderr[-3000:]
    assert translated.stdout.splitlines() == expected["translations"]  # token-exact: no near-tie here
    tags = {tag for tag, _, _ in event_points(run_dir)}  # what tx-board's tabs read
    assert {
        "attention_explorer/probe_1/cross",
        "samples/translations",
        "_hparams_/session_start_info",
    } <= tags
    assert any(tag.startswith("layers/gradient_norm/") for tag in tags)


@pytest.mark.slow  # a 2-job JAX sweep on the joblib launcher, then tx-compare: ~6 min loaded
def test_a_jax_sweep_runs_on_joblib_and_tx_compare_reads_it(tmp_path):
    sweep_dir = tmp_path / "sweep"
    launcher = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    done = tx_train(
        "sweep=smoke", "trainer.backend=jax", *launcher, f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summaries = [json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")]
    assert len(summaries) == 2
    assert all(s["status"] == "completed" and s["config"]["trainer"]["backend"] == "jax" for s in summaries)
    command = [sys.executable, "-m", "tx_keras.cli.compare", str(sweep_dir), "--out", str(tmp_path / "cmp")]
    compared = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert compared.returncode == 0, compared.stderr[-3000:]
    rows = (tmp_path / "cmp" / "comparison.csv").read_text().splitlines()
    assert len(rows) == 3  # header and the two jobs


@pytest.mark.slow  # test_preemption's mid-epoch stop and exact resume, on JAX: ~4 min loaded (30 s CPU)
def test_a_signal_mid_epoch_resumes_exactly_on_jax():
    """A stop signal's mid-epoch checkpoint and the resume that ends equal to an uninterrupted run (weights
    bit for bit, every curve point), with Keras on JAX: the callbacks read JAX's live state correctly."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_preemption.py"]
    command += ["-k", "test_a_signal_mid_epoch and 15-fixed"]  # 15: SIGTERM
    environment = {**os.environ, "KERAS_BACKEND": "jax"}
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]


if __name__ == "__main__":
    if sys.argv[1] == "translate":
        jax_translations(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        jax_side(Path(sys.argv[1]), Path(sys.argv[2]))
