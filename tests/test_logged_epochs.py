"""A run ended before `trainer.epochs` (time budget, early stopping) still logs the epoch it ended with:
attention maps, the Attention tab's raw weights and the samples table, read back from the event files."""

from __future__ import annotations

import keras
import pytest
from tensorboard.backend.event_processing import event_accumulator

from tx_keras.data import build_task, make_dataset
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.models import ModelConfig, Transformer
from tx_keras.training.callbacks import AttentionMaps, Probes, TextSamples
from tx_keras.training.callbacks.attention_maps import epochs_to_log
from tx_keras.training.callbacks.early_stopping import EarlyStopping
from tx_keras.training.callbacks.logged_epochs import LoggedEpochs
from tx_keras.training.callbacks.time_budget import TimeBudget
from tx_keras.training.step.masked_loss import MaskedCrossEntropy

EPOCHS = 30  # > 20: logging.attention_maps=auto logs the first and the last (configured) epoch


class _StepBudget(TimeBudget):
    """The real budget callback on a clock of one minute per training step: 64 rows in batches of 16
    are 4 steps an epoch, so a 10-minute budget runs out at step 11, in the third epoch."""

    def elapsed(self) -> float:
        return 60.0 * int(self.model.optimizer.iterations)


def _stoppers() -> dict:
    return {
        "time budget": _StepBudget(minutes=10),
        # improving by more than 1000 never happens: patience 2 ends the run after its third epoch
        "early stopping": EarlyStopping("loss", patience=2, epochs=EPOCHS, min_delta=1000),
    }


def _steps(folder, tag: str) -> list[int]:
    accumulator = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.TENSORS: 0}
    )
    accumulator.Reload()
    return [event.step for event in accumulator.Tensors(tag)]


@pytest.mark.parametrize("stopper", ["time budget", "early stopping"])
def test_a_run_stopped_early_logs_the_epoch_it_ended_with(tmp_path, stopper):
    cfg = {"name": "copy", "seed": 0, "vocab_size": 8, "length": 5, "min_length": 3}
    task = build_task({**cfg, "num_train": 64, "num_validation": 4, "num_test": 4})
    model = Transformer(
        ModelConfig(num_encoder_layers=1, num_decoder_layers=1, d_model=8, num_heads=2, dff=16),
        len(task.source_vocab),
        len(task.target_vocab),
        task.source_length,
        task.target_length - 1,
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=MaskedCrossEntropy(), jit_compile=False)
    source, target = task.splits["train"]
    model((source[:1], target[:1, :-1]))
    model.optimizer.build(model.trainable_variables)  # as tx-train does: the step is traced once
    probes = Probes.from_task(task, 2)
    epochs = epochs_to_log("auto", EPOCHS)
    assert epochs == {1, EPOCHS}
    decode = cached_greedy_decoder(model, task.target_length - 1)
    callbacks = [
        AttentionMaps(tmp_path, probes, epochs),
        TextSamples(tmp_path, probes, task, decode, epochs),
        _stoppers()[stopper],
    ]
    history = model.fit(
        make_dataset(source, target, 16, shuffle=False),
        epochs=EPOCHS,
        callbacks=callbacks,
        shuffle=False,
        verbose=0,
    )
    assert len(history.history["loss"]) == 3  # stopped in (or after) the third epoch
    assert _steps(tmp_path, "attention_explorer/probe_1/cross") == [0, 1, 3]  # 0: before training
    assert _steps(tmp_path, "attention/cross/layer_1") == [1, 3]  # the Images tab's maps
    assert _steps(tmp_path, "samples/translations") == [1, 3]


def test_an_epoch_is_logged_once_and_nothing_when_logging_is_off():
    logged = LoggedEpochs({1, 30})
    assert [logged.epoch_ended(epoch) for epoch in range(3)] == [True, False, False]
    assert logged.training_ended() == 3 and logged.training_ended() is None
    finished = LoggedEpochs({1, 2})
    assert [finished.epoch_ended(epoch) for epoch in range(2)] == [True, True]
    assert finished.training_ended() is None  # the planned last epoch was logged as it ended
    assert LoggedEpochs({1, 30}).training_ended() is None  # a resumed run that had already stopped
    off = LoggedEpochs(set())
    off.epoch_ended(0)
    assert off.training_ended() is None
