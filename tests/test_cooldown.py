"""trainer.cooldown: the learning rate falls linearly to 0 over the last share of training, by the
planned steps or by the time budget, and a resumed run continues its budget instead of starting a new one."""

import json

import keras
import numpy as np
import pytest

from tests.conftest import TINY, tx_train
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH, load_checkpoint
from tx_keras.training.callbacks.cooldown_clock import CooldownClock
from tx_keras.training.callbacks.time_budget import SPENT_KEY, TimeBudget
from tx_keras.training.callbacks.update_count import UpdateCount
from tx_keras.training.step.learning_rate import ConstantSchedule, Cooldown, NoamSchedule, build_schedule
from tx_keras.training.trainer_config import TrainerConfig


def test_the_factor_is_one_then_falls_linearly_to_zero():
    cooldown = Cooldown(ConstantSchedule(2e-3), fraction=0.4)
    factors = []
    for progress in (0.0, 0.6, 0.7, 0.9, 1.0, 1.2):
        cooldown.factor.assign(cooldown.factor_at(progress))
        factors.append(float(cooldown(10)) / 2e-3)
    assert factors == pytest.approx([1.0, 1.0, 0.75, 0.25, 0.0, 0.0])
    assert cooldown.peak() == 2e-3


def test_build_schedule_wraps_only_when_asked_and_the_config_round_trips():
    keys = {"warmup_steps": 100, "lr_scale": 1.0, "learning_rate": 1.0}
    assert isinstance(build_schedule(TrainerConfig(**keys, cooldown=0.0), d_model=64), NoamSchedule)
    wrapped = build_schedule(TrainerConfig(**keys, cooldown=0.25), d_model=64)
    assert isinstance(wrapped, Cooldown) and isinstance(wrapped.schedule, NoamSchedule)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(wrapped))
    assert isinstance(restored, Cooldown) and restored.get_config() == wrapped.get_config()
    assert float(restored(50)) == pytest.approx(float(NoamSchedule(64, 100, 1.0)(50)))
    with pytest.raises(ValueError, match=r"must be in \(0, 1\]"):
        Cooldown(ConstantSchedule(1e-3), 1.5)


class _Recorder(keras.callbacks.Callback):
    def __init__(self, cooldown: Cooldown):
        super().__init__()
        self.cooldown, self.factors = cooldown, []

    def on_train_batch_end(self, batch, logs=None):
        self.factors.append(float(self.cooldown.factor.numpy()))


class _StepClock:
    """A clock for the budget that moves only when a step ends, by `seconds` a step (advanced by a `_Tick`
    in the fit's callbacks): the minutes a budget sees are then a count of steps, not the host's speed."""

    def __init__(self, seconds: float):
        self.now, self.seconds = 0.0, seconds

    def __call__(self) -> float:
        return self.now


class _Tick(keras.callbacks.Callback):
    def __init__(self, clock: _StepClock):
        super().__init__()
        self.clock = clock

    def on_train_batch_end(self, batch, logs=None):
        self.clock.now += self.clock.seconds


def _fit(cooldown: Cooldown, clock: CooldownClock, epochs: int, extra=()) -> list[float]:
    """8 steps an epoch; the factor each step trained with."""
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(cooldown), "mse")
    recorder = _Recorder(cooldown)
    x = np.ones((8, 2), "float32")
    callbacks = [clock.count, clock, recorder, *extra]
    model.fit(x, x[:, :1], batch_size=1, epochs=epochs, callbacks=callbacks, verbose=0)
    return recorder.factors


def test_without_a_budget_the_clock_counts_planned_steps():
    cooldown = Cooldown(ConstantSchedule(1e-3), fraction=0.5)
    factors = _fit(
        cooldown, CooldownClock(cooldown, None, UpdateCount(), epochs=2, steps_per_epoch=8), epochs=2
    )
    # before step i (0-based) progress is i/16: full rate through step 8, then (16 - i) / 8
    assert factors == pytest.approx([1.0] * 9 + [(16 - i) / 8 for i in range(9, 16)])


def test_a_step_budget_before_the_epochs_ends_the_decay_at_its_step():
    cooldown = Cooldown(ConstantSchedule(1e-3), fraction=0.5)
    clock = CooldownClock(cooldown, None, UpdateCount(), epochs=2, steps_per_epoch=8, max_steps=8)
    # planned over the budget's 8 steps, not the epochs' 16: full rate through step 4, then (8 - i) / 4
    assert _fit(cooldown, clock, epochs=1) == pytest.approx([1.0] * 5 + [(8 - i) / 4 for i in range(5, 8)])
    later = CooldownClock(cooldown, None, UpdateCount(), epochs=2, steps_per_epoch=8, max_steps=100)
    assert later.planned_steps == 16  # the epochs end first


def test_with_a_budget_the_clock_follows_the_minutes_spent():
    cooldown = Cooldown(ConstantSchedule(1e-3), fraction=0.5)
    step_clock = _StepClock(seconds=3.0)
    budget = TimeBudget(minutes=1.0, spent_minutes=0.75, clock=step_clock)  # resumed: 45 of its 60 s spent
    clock = CooldownClock(cooldown, budget, UpdateCount(), epochs=1, steps_per_epoch=1000)
    factors = _fit(cooldown, clock, epochs=1, extra=[_Tick(step_clock), budget])
    # Before step i, 45 + 3 i of the 60 s are spent: the factor (1 - progress) / 0.5 falls from 0.5 by
    # 0.1 a step (the planned 1,000 steps alone would keep it at 1), reaching 0 at step 5, after which the
    # budget ends training: 6 of the epoch's 8 steps.
    assert factors == pytest.approx([0.5, 0.4, 0.3, 0.2, 0.1, 0.0], abs=1e-6)  # a float32 variable
    assert budget.reached


def test_with_a_budget_the_planned_steps_still_end_the_decay_when_they_come_first():
    cooldown = Cooldown(ConstantSchedule(1e-3), fraction=0.5)
    step_clock = _StepClock(seconds=3.0)
    budget = TimeBudget(minutes=60.0, clock=step_clock)  # 16 steps of 3 s: the epochs end long before it
    clock = CooldownClock(cooldown, budget, UpdateCount(), epochs=2, steps_per_epoch=8)
    factors = _fit(cooldown, clock, epochs=2, extra=[_Tick(step_clock), budget])
    assert factors == pytest.approx([1.0] * 9 + [(16 - i) / 8 for i in range(9, 16)])
    assert not budget.reached


def _set_spent(path, minutes: float) -> None:
    """Rewrite a checkpoint as if its run had trained `minutes` before it was killed."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    meta = json.loads(str(arrays["meta"]))
    meta["logs"][SPENT_KEY] = minutes
    arrays["meta"] = np.array(json.dumps(meta))
    with open(path, "wb") as stream:
        np.savez(stream, **arrays)


@pytest.mark.slow  # ~55 s on 2 cores; resuming is in the default run (test_run.py), the budget here
def test_a_resumed_run_continues_its_time_budget(tmp_path):
    run_dir = tmp_path / "run"
    common = [*TINY, "trainer.max_train_minutes=30", "trainer.cooldown=0.5", "export.enabled=false"]
    first = tx_train(*common, "trainer.epochs=1", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    spent = load_checkpoint(run_dir / CHECKPOINT_PATH).logs[SPENT_KEY]
    assert 0.0 < spent < 5.0  # the checkpoint carries the minutes trained
    _set_spent(run_dir / CHECKPOINT_PATH, 29.99)  # as if killed a second before the budget
    again = tx_train(*common, "trainer.epochs=20", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs"] == 2  # one cut-short epoch, not 19
    assert summary["stopped_by"] == "time budget: trainer.max_train_minutes=30"
    assert load_checkpoint(run_dir / CHECKPOINT_PATH).logs[SPENT_KEY] > 29.99


def test_a_cooldown_outside_0_1_is_refused(tmp_path, tx_train_here):
    result = tx_train_here(*TINY, "trainer.cooldown=1.5", cwd=tmp_path)
    assert result.returncode == 2
    assert "tx-train: error: trainer.cooldown=1.5 must be in [0, 1]" in result.stderr
