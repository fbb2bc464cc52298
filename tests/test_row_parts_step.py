"""A step cut into row parts (models/row_parts_step.py): the same loss, gradients and metrics as the
whole batch, the parts only where they pay (TensorFlow's graph step with one intra-op thread), and the
thread pools set by the command, never by the library."""

from types import SimpleNamespace

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import tx_keras.models.row_parts_step as row_parts_step
from tests.float_tolerance import FLOAT32
from tests.test_real_positions import _batch, _model
from tx_keras.models.row_parts_step import auto_parts, row_parts
from tx_keras.runtime import thread_pools
from tx_keras.training.step import step_threads
from tx_keras.training.step.step_threads import plan_step_threads, planned_parts
from tx_keras.training.trainer_config import TrainerConfig


def _steps(parts: int, inputs, labels) -> tuple[list, list, list]:
    """Three train steps and one evaluation of a fresh model cut into `parts`: (logs, eval, weights)."""
    model = _model()
    model.step_parts = parts
    logs = [model.train_on_batch(inputs, labels, return_dict=True) for _ in range(3)]
    evaluated = model.evaluate(inputs, labels, batch_size=len(labels), return_dict=True, verbose=0)
    return logs, evaluated, [ops.convert_to_numpy(v) for v in model.trainable_variables]


def test_parts_give_the_whole_batchs_loss_weights_and_metrics(monkeypatch, parts=2):
    """Rows with 2..7 real tokens each: the parts hold different token counts, so only the count-weighted
    mean equals the whole batch's (a mean of the parts' means would not)."""
    traced = []
    original = row_parts_step.step_in_parts
    monkeypatch.setattr(
        "tx_keras.models.transformer.step_in_parts",
        lambda model, data, n, training: traced.append((n, training)) or original(model, data, n, training),
    )
    inputs, labels = _batch()
    whole_logs, whole_eval, whole_weights = _steps(1, inputs, labels)
    assert traced == []
    cut_logs, cut_eval, cut_weights = _steps(parts, inputs, labels)
    assert (parts, True) in traced and (parts, False) in traced  # the train and the test step were cut
    for want, got in zip(whole_logs, cut_logs, strict=True):
        assert got["loss"] == pytest.approx(want["loss"], rel=1e-5)
        assert got["accuracy"] == pytest.approx(want["accuracy"], abs=1e-6)
    assert whole_logs[-1]["loss"] < whole_logs[0]["loss"]  # the steps did train
    assert cut_eval["loss"] == pytest.approx(whole_eval["loss"], rel=1e-5)
    assert cut_eval["accuracy"] == pytest.approx(whole_eval["accuracy"], abs=1e-6)
    for want, got in zip(whole_weights, cut_weights, strict=True):
        np.testing.assert_allclose(got, want, **FLOAT32)


@pytest.mark.slow  # traces a two-part step: ~15 s alone (the parts' equality stays above)
def test_a_part_without_rows_changes_nothing():
    """A one-row batch in two parts: the first part is empty and adds no loss, tokens or gradient."""
    inputs, labels = _batch()
    one = (inputs[0][:1], inputs[1][:1]), labels[:1]
    whole_logs, _, whole_weights = _steps(1, *one)
    cut_logs, _, cut_weights = _steps(2, *one)
    assert cut_logs[0]["loss"] == pytest.approx(whole_logs[0]["loss"], rel=1e-5)
    for want, got in zip(whole_weights, cut_weights, strict=True):
        np.testing.assert_allclose(got, want, **FLOAT32)


@pytest.mark.parametrize(
    ("intra", "inter", "expected"), [(1, 2, 2), (1, 4, 2), (1, 1, 1), (2, 2, 1), (0, 2, 1)]
)
def test_auto_cuts_only_where_an_op_runs_on_one_thread(monkeypatch, intra, inter, expected):
    """Two parts where TensorFlow's pools give each op one thread and run two ops at once (what tx-train
    sets on 2 cores); TensorFlow's defaults (intra 0 = one per core, here 2) keep the whole batch."""
    monkeypatch.setattr(thread_pools, "usable_cores", lambda: 2)
    monkeypatch.setattr(tf.config.threading, "get_intra_op_parallelism_threads", lambda: 0)  # the default
    for name, value in (("TF_NUM_INTRAOP_THREADS", intra), ("TF_NUM_INTEROP_THREADS", inter)):
        monkeypatch.setenv(name, str(value)) if value else monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tf.config.threading, "get_inter_op_parallelism_threads", lambda: 0)
    assert auto_parts() == expected


def test_only_a_token_mean_graph_step_of_one_replica_is_cut(monkeypatch):
    monkeypatch.setattr(row_parts_step, "auto_parts", lambda: 2)
    model = _model()
    assert row_parts(model) == 2 and row_parts(model, sample_weight=np.ones(6)) == 1
    model.step_parts = 3
    assert row_parts(model) == 3
    assert row_parts(_model(jit_compile=True)) == 1  # XLA schedules a compiled step itself
    sparse = _model(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=[])
    assert row_parts(sparse) == 1  # a mean over rows, not over real tokens: the parts would not add up
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        assert row_parts(model) == 1


@pytest.mark.parametrize(
    ("trainer", "cores", "expected"),
    [
        ({"backend": "tensorflow", "jit_compile": "auto"}, 2, 2),
        ({"backend": "tensorflow", "jit_compile": "auto"}, 4, 1),  # unmeasured: TensorFlow's defaults
        ({"backend": "tensorflow", "jit_compile": "auto"}, 1, 1),
        ({"backend": "tensorflow", "jit_compile": True}, 2, 1),
        ({"backend": "jax", "jit_compile": "auto"}, 2, 1),
        ({"backend": "tensorflow", "jit_compile": "auto", "distribution": "data_parallel"}, 2, 1),
        ({"backend": "tensorflow", "jit_compile": "auto", "step_parts": 3}, 8, 3),
        ({"backend": "tensorflow", "jit_compile": "auto", "step_parts": 1}, 2, 1),
    ],
)
def test_the_command_plans_two_parts_on_two_cores_for_a_graph_step(trainer, cores, expected):
    assert (
        planned_parts(SimpleNamespace(**{"step_parts": "auto", "distribution": "none", **trainer}), cores)
        == expected
    )


def test_the_plan_sets_the_pools_unless_the_user_did(monkeypatch, recorded_pools):
    """Through tf.config.threading."""
    trainer = TrainerConfig(step_parts="auto")
    pools = recorded_pools
    monkeypatch.setattr(step_threads, "usable_cores", lambda: 2)
    assert "2 row parts" in plan_step_threads(trainer) and pools == {"intra": 1, "inter": 2}
    pools.clear()
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "2")  # the user's, or a sweep's thread budget
    assert "left as TF_NUM_INTRAOP_THREADS=2" in plan_step_threads(trainer) and pools == {}
    monkeypatch.delenv("TF_NUM_INTRAOP_THREADS")
    monkeypatch.setattr(step_threads, "usable_cores", lambda: 8)
    assert "defaults" in plan_step_threads(trainer) and pools == {}


def test_a_runtime_that_runs_already_keeps_its_pools():
    """This test process's TensorFlow has run ops: its pools cannot change, and the plan says so."""
    tf.constant(1.0) + 1.0
    trainer = TrainerConfig(step_parts=2)
    assert plan_step_threads(trainer) == "thread pools: as this process's TensorFlow runtime started them"
