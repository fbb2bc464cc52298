"""Early stopping: the epoch it stops at, its state carried through a checkpoint, and a real resumed run."""

import json
from types import SimpleNamespace

import pytest

from tests.conftest import TINY, tx_train
from tx_keras.training.callbacks.early_stopping import BEST_KEY, STOPPED_KEY, WAIT_KEY, EarlyStopping


def _stopper(**kwargs) -> EarlyStopping:
    stopper = EarlyStopping(**{"monitor": "val_exact_match", "patience": 2, "epochs": 10, **kwargs})
    stopper.set_model(SimpleNamespace(stop_training=False))
    return stopper


def _stop_epoch(stopper: EarlyStopping, values: list[float], first_epoch: int = 0) -> tuple[int | None, dict]:
    """Feed one monitored value per epoch; the 1-based epoch after which training stopped (None: never)."""
    logs: dict = {}
    for epoch, value in enumerate(values, start=first_epoch):
        logs = {stopper.monitor: value}
        stopper.on_epoch_end(epoch, logs)
        if stopper.model.stop_training:
            return epoch + 1, logs
    return None, logs


def test_stops_after_patience_epochs_without_improvement():
    epoch, _ = _stop_epoch(_stopper(), [0.1, 0.5, 0.5, 0.4, 0.9])
    assert epoch == 4  # best 0.5 after epoch 2; epochs 3 and 4 do not beat it


def test_min_delta_and_lower_is_better_for_a_loss():
    epoch, _ = _stop_epoch(_stopper(monitor="val_loss", min_delta=0.1), [2.0, 1.5, 1.45, 1.41, 1.0])
    assert epoch == 4  # 1.45 and 1.41 improve on 1.5 by less than 0.1


def test_stop_at_ends_training_once_the_task_is_learned():
    stopper = _stopper(stop_at=1.0)
    epoch, _ = _stop_epoch(stopper, [0.2, 1.0, 1.0])
    assert epoch == 2 and "reached 1" in stopper.reason


def test_no_early_stop_reported_at_the_planned_last_epoch():
    stopper = _stopper(epochs=3)
    epoch, _ = _stop_epoch(stopper, [0.5, 0.5, 0.5])
    assert epoch is None and stopper.reason is None


def test_a_resumed_stopper_stops_where_the_uninterrupted_one_did():
    values = [0.1, 0.3, 0.3, 0.2, 0.25, 0.9]
    straight, _ = _stop_epoch(_stopper(), values)
    first = _stopper()
    _, logs = _stop_epoch(first, values[:3])  # the checkpoint after epoch 3 keeps these logs
    assert {BEST_KEY, WAIT_KEY, STOPPED_KEY} <= set(logs)
    resumed, _ = _stop_epoch(_stopper(state=logs), values[3:], first_epoch=3)
    assert straight == resumed == 4
    forgetful, _ = _stop_epoch(_stopper(), values[3:], first_epoch=3)
    assert forgetful != straight  # without the state the count would start over


def test_an_unknown_monitor_names_the_known_logs():
    with pytest.raises(KeyError, match=r"val_exact_mtch is not an epoch log \(loss, val_loss\)"):
        _stopper(monitor="val_exact_mtch").on_epoch_end(0, {"loss": 1.0, "val_loss": 1.0})


# Nothing counts as an improvement after epoch 1 (min_delta 100 on a loss of ~5): stops after epoch 3.
NEVER_BETTER = [
    "trainer.early_stopping.monitor=val_loss",
    "trainer.early_stopping.min_delta=100",
    "trainer.early_stopping.stop_at=null",
    "logging.probes=0",
    "logging.diagnostics_every=0",
    "export.enabled=false",
]


@pytest.mark.slow
def test_a_resumed_run_stops_at_the_epoch_the_uninterrupted_run_stopped(tmp_path):
    tiny = [arg for arg in TINY if not arg.startswith("trainer.epochs=")]
    straight = tmp_path / "straight"
    result = tx_train(*tiny, *NEVER_BETTER, "trainer.epochs=6", f"hydra.run.dir={straight}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((straight / "summary.json").read_text())
    assert summary["epochs"] == 3 and summary["stopped_by"].startswith("early stopping: no improvement")

    resumed = tmp_path / "resumed"
    first = tx_train(*tiny, *NEVER_BETTER, "trainer.epochs=2", f"hydra.run.dir={resumed}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    again = tx_train(f"resume={resumed}", "trainer.epochs=6", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    resumed_summary = json.loads((resumed / "summary.json").read_text())
    assert resumed_summary["epochs"] == 3 and resumed_summary["stopped_by"] == summary["stopped_by"]
