"""tx-train end to end in a subprocess, as a user runs it; its one-line refusals through its main."""

import json

import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

from tests.conftest import TINY
from tx_keras.training.step.precision import resolve_precision


def _tags(folder):
    (events,) = folder.glob("events.out.tfevents.*")
    accumulator = event_accumulator.EventAccumulator(
        str(events), size_guidance={event_accumulator.TENSORS: 0}
    )
    accumulator.Reload()
    return accumulator


TAGS = ("epoch_loss", "epoch_accuracy")


def _value(event) -> float:
    return float(tf.make_ndarray(event.tensor_proto))


def test_tiny_run_writes_summary_and_events(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["epochs"] == 2 and summary["parameters"] > 1000 and summary["wall_time_s"] > 0
    metrics = summary["metrics"]
    # The end-of-run figures are the logged curves' own: the summary's validation loss and accuracy are
    # one epoch's validation figures (same weights, same batches, both per token), the train loss the
    # last epoch's, and two epochs lowered it.
    curves = {
        split: {tag: [_value(event) for event in _tags(run_dir / split).Tensors(tag)] for tag in TAGS}
        for split in ("train", "validation")
    }
    assert metrics["train_loss"] == pytest.approx(curves["train"]["epoch_loss"][-1], rel=1e-5)
    assert curves["train"]["epoch_loss"][1] < curves["train"]["epoch_loss"][0]
    # Nothing restores an earlier epoch's weights (early stopping keeps the last model), so the figures are
    # the last epoch's; the two epochs' losses differ by more than the tolerance, so the first's would fail.
    for name, tag in (("validation_loss", "epoch_loss"), ("validation_accuracy", "epoch_accuracy")):
        assert metrics[name] == pytest.approx(curves["validation"][tag][-1], rel=1e-4), name
    assert curves["validation"]["epoch_loss"][0] != pytest.approx(metrics["validation_loss"], rel=1e-4)
    assert metrics["test_exact_match"] <= metrics["test_accuracy"]  # a sentence right is every token right
    assert summary["config"]["model"]["d_model"] == 32  # the composed, resolved config
    assert summary["precision"] == resolve_precision("auto")  # what `auto` became on this machine
    assert (run_dir / ".hydra" / "config.yaml").exists()

    train = _tags(run_dir / "train")
    assert {"epoch_loss", "epoch_accuracy", "optimizer/learning_rate"} <= set(train.Tags()["tensors"])
    assert [event.step for event in train.Tensors("epoch_loss")] == [0, 1]
    # Under 10 steps an epoch, the per-step curve has one point per epoch, at its end: the epoch's loss,
    # weighted per token as `epoch_loss` is (not Keras' per-row tracker).
    step_loss = train.Tensors("batch_loss")
    assert len(step_loss) == 2 and step_loss[0].step < step_loss[1].step < 20
    assert [_value(event) for event in step_loss] == pytest.approx(curves["train"]["epoch_loss"], rel=1e-5)
    assert {"epoch_loss", "epoch_accuracy"} <= set(_tags(run_dir / "validation").Tags()["tensors"])
    final = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.TENSORS: 0})
    final.Reload()  # the run folder's own event files: dashboard, final scores, HParams
    (exact,) = final.Tensors("final/test_exact_match")
    assert float(tf.make_ndarray(exact.tensor_proto)) == pytest.approx(summary["metrics"]["test_exact_match"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model.num_heads=3", "tx-train: error: model.num_heads=3 does not divide model.d_model=32"),
        (
            "model.norm=sideways",
            "tx-train: error: model.norm='sideways' is not allowed; choose one of: post, pre",
        ),
        ("data.name=wmt", "tx-train: error: data.name='wmt' is not a task; choose one of: translation"),
        ("data=revers", "tx-train: error: data=revers is not an option of data/; did you mean reverse?"),
        (
            "model.num_head=3",
            "tx-train: error: model.num_head is not a config key; did you mean model.num_heads",
        ),
        ("modl.d_model=3", "tx-train: error: modl.d_model is not a config key; did you mean model.d_model?"),
        ("+data=copy", "tx-train: error: Multiple values for data. To override a value use 'override data"),
    ],
)
def test_invalid_config_fails_in_one_line_before_training(tmp_path, tx_train_here, override, message):
    """Through tx-train's main in this process (tests/test_config_check.py runs one refusal in a fresh
    process, where TensorFlow must not even be imported)."""
    result = tx_train_here(*TINY, override, f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("tx-train")]
    assert lines == [lines[0]] and lines[0].startswith(message)
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run" / "summary.json").exists() and not (tmp_path / "run" / "train").exists()
