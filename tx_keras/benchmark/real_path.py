"""The path users train on: `fit` over the bucketed tf.data pipeline of the tatoeba_small preset, with its
callbacks, on a generated corpus (no download), timed over a whole epoch after a warm-up epoch.

Each row trains in a fresh worker process (worker_process.py), started as tx-train starts a run: TensorFlow
sizes its thread pools once per process, when its runtime starts, and tx-train chooses them for the run
before that (training/step/step_threads.py: one intra-op thread and a step in two row parts on 2 cores). A row
that stands for a user's run must start the same way; a row on TensorFlow's default pools is its peer
(real_path_race.py).
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from omegaconf import OmegaConf

from tx_keras.benchmark.peers import EveryPosition
from tx_keras.benchmark.settings import RealPathSize
from tx_keras.benchmark.worker_process import Channel, worker_answer
from tx_keras.data import Vocabulary, make_dataset
from tx_keras.data.batching.shape_classes import shape_classes
from tx_keras.models import ModelConfig, Transformer
from tx_keras.models.row_parts_step import row_parts
from tx_keras.run_folder.checkpoint import CHECKPOINT_PATH
from tx_keras.runtime import allocator
from tx_keras.runtime.compiled_step import step_is_compiled
from tx_keras.runtime.cpu_share import CpuClock, CpuShare
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced
from tx_keras.runtime.thread_pools import inter_op_threads, intra_op_threads
from tx_keras.training.callbacks.epoch_checkpoint import EpochCheckpoint
from tx_keras.training.callbacks.epoch_scalars import EpochScalars
from tx_keras.training.callbacks.epoch_variable import EpochVariable
from tx_keras.training.step.model_compile import compile_model
from tx_keras.training.step.precision import precision_policy

PRESET = "tatoeba_small"
ROW = "tx_keras.benchmark.real_path:serve_row"  # the worker's function (worker_process.py)


def generated_corpus(pairs: int, vocab: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Token-id pairs shaped like Tatoeba English -> French after WordPiece: sentence lengths drawn from a
    log-normal with a median of 6 words (95th percentile ~12, as eng-fra.tsv), ~1.4 tokens a word, word
    ids Zipf-distributed. Rows as `parallel_text` builds them: source `words EOS`, target `SOS words EOS`,
    right-padded with 0."""
    rng = np.random.default_rng(seed)
    words = np.clip(np.rint(rng.lognormal(np.log(6.0), 0.4, (2, pairs))), 1, 40)
    lengths = np.rint(1.4 * words).astype(int)
    first = len(Vocabulary.SPECIALS)
    frequencies = 1.0 / np.arange(1, vocab - first + 1)  # Zipf's law: the r-th word is 1/r as common

    def rows(side_lengths: np.ndarray, prefix: list[int]) -> np.ndarray:
        width = len(prefix) + int(side_lengths.max()) + 1
        out = np.zeros((pairs, width), np.int32)
        for row, length in enumerate(side_lengths):
            ids = first + rng.choice(vocab - first, length, p=frequencies / frequencies.sum())
            out[row, : len(prefix) + length + 1] = [*prefix, *ids, Vocabulary.EOS]
        return out

    return rows(lengths[0], []), rows(lengths[1], [Vocabulary.SOS])


def preset():
    """The shipped tatoeba_small config (model, trainer), composed as `tx-train experiment=tatoeba_small`."""
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        return compose(config_name="config", overrides=[f"experiment={PRESET}"])


class _EpochClock(keras.callbacks.Callback):
    """Wall time, CPU time (user and kernel, every thread) and steps of each epoch, and the same from its
    first step's start to its last step's end: the steps alone, without the epoch's start (the iterator)
    and end (the checkpoint's copy of the state, the epoch's scalars), which a 46-step epoch weighs ~40x
    more than a user's. Placed after `EpochCheckpoint`, it also times the last epoch's checkpoint write
    from the epoch's end until training ends (`EpochCheckpoint` waits for it there)."""

    def __init__(self):
        super().__init__()
        self.epochs: list[tuple[int, CpuShare, CpuShare]] = []
        self.write: CpuShare | None = None

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._steps, self._clock, self._steps_clock = 0, CpuClock(), None

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        if self._steps_clock is None:
            self._steps_clock = CpuClock()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._steps += 1
        self._steps_share = self._steps_clock.share()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epochs.append((self._steps, self._clock.share(), self._steps_share))
        self._write_clock = CpuClock()

    def on_train_end(self, logs: dict | None = None) -> None:
        self.write = self._write_clock.share()


def epoch_tokens(dataset: tf.data.Dataset) -> tuple[int, int]:
    """(real tokens, computed positions) of one pass over `dataset`: real = source words plus target
    positions with a label; positions = every source and decoder position of each (padded) batch."""
    real = positions = 0
    for (source, decoder_input), labels in dataset:
        real += int(tf.math.count_nonzero(source)) + int(tf.math.count_nonzero(labels))
        positions += int(tf.size(source)) + int(tf.size(decoder_input))
    return real, positions


def real_path_row(size: RealPathSize, seed: int = 0, every_position: bool = False) -> dict:
    """Train the tatoeba_small model with its own trainer settings (`compile_model`, bucketed token
    batches, TensorBoard, an epoch checkpoint) for 2 epochs of a generated corpus; report the second
    (the first traces the step for the new batch shapes).

    The checkpoint is taken at the timed epoch's end only, and its write (in the background, as in a run)
    is timed on its own after it: a run writes one per epoch of ~1,750 steps (tatoeba_small on
    eng-fra.tsv), where the write overlaps the next epoch's first steps (~0.1 % of its time); one inside
    this 46-step epoch would weigh it ~40x (docs/decisions/checkpoint-write.md). With `every_position`
    the model trains on every position, padding included (peers.py's `EveryPosition`, the peers' work):
    what the gather of real positions is worth on bucketed batches.
    """
    cfg = preset()
    model_cfg = ModelConfig(**{**OmegaConf.to_container(cfg.model, resolve=True), **dict(size.model)})
    trainer = cfg.trainer
    if size.batch_tokens is not None:
        trainer = OmegaConf.merge(trainer, {"batch_tokens": size.batch_tokens})
    source, target = generated_corpus(size.pairs, size.vocab, seed)
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    with precision_policy(trainer.precision, step_is_compiled(trainer)) as precision:
        model = (EveryPosition if every_position else Transformer)(
            model_cfg,
            source_vocab_size=size.vocab,
            target_vocab_size=size.vocab,
            max_source_length=source.shape[1],
            max_target_length=target.shape[1] - 1,
        )
    compile_model(model, trainer)
    epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
    dataset = make_dataset(
        source,
        target,
        trainer.batch_size,
        shuffle=True,
        seed=seed,
        epoch=epoch,
        batching=trainer.batching,
        batch_tokens=trainer.batch_tokens,
        shape_classes=shape_classes(trainer),
    )
    epoch.assign(1)  # the timed epoch's batches, counted before training
    real, positions = epoch_tokens(dataset)
    clock = _EpochClock()
    with tempfile.TemporaryDirectory() as folder, epoch_end_warning_silenced():
        callbacks = [
            keras.callbacks.TerminateOnNaN(),
            EpochVariable(epoch),
            EpochScalars(folder, cfg.logging.loss_every_steps),
            EpochCheckpoint(Path(folder) / CHECKPOINT_PATH, 2, 2),  # at the timed epoch's end only
            clock,  # after the checkpoint: its epoch end includes the state's copy, its train end the write
        ]
        model.fit(dataset, epochs=2, callbacks=callbacks, shuffle=False, verbose=0)
        checkpoint_mb = (Path(folder) / CHECKPOINT_PATH).stat().st_size / 2**20
    steps, timed, steps_only = clock.epochs[-1]
    return {
        "preset": PRESET,
        "model": asdict(model_cfg),
        "parameters": int(model.count_params()),
        "precision": model.dtype_policy.name,
        "requested_precision": precision,
        "jit_compile": bool(model.jit_compile),
        "step_parts": row_parts(model),  # each step's rows in this many parts (models/row_parts_step.py)
        "intra_op_threads": intra_op_threads(),  # the pools this process's TensorFlow runs
        "inter_op_threads": inter_op_threads(),
        "every_position": every_position,
        "batching": trainer.batching,
        "batch_tokens": trainer.batch_tokens,
        "pairs": size.pairs,
        "steps": steps,
        "epoch_s": timed.wall_s,
        "first_epoch_s": clock.epochs[0][1].wall_s,
        "tokens_per_s": real / timed.wall_s,
        "positions_per_s": positions / timed.wall_s,
        "padding_share": 1.0 - real / positions,
        "steps_per_minute": 60.0 * steps / timed.wall_s,
        "kernel_share": timed.kernel_share,
        "cpu_per_wall": timed.cpu_per_wall,  # cores kept busy over the timed epoch, out of `cores`
        "cpu_ms_per_step": 1000.0 * timed.cpu_s / steps,  # the work of a step, whatever else loads the CPU
        "steps_s": steps_only.wall_s,  # the first step's start to the last one's end
        "steps_cpu_per_wall": steps_only.cpu_per_wall,  # cores kept busy by the steps alone
        "cores": timed.cores,
        "checkpoint_mb": checkpoint_mb,
        "checkpoint_write_s": clock.write.wall_s,  # the write after the timed epoch, in the background
        "checkpoint_write_cpu_s": clock.write.cpu_s,
        "allocator": allocator.applied(),  # what tx-bench set up before TensorFlow (TX_KERAS_ALLOCATOR)
    }


def serve_row(spec: dict, channel: Channel) -> None:
    """In the worker: plan the thread pools as tx-train does (`planned_pools`) or leave TensorFlow's
    defaults, train the row, answer it with the pools it ran on."""
    from tx_keras.training.step.step_threads import plan_step_threads

    pools = "thread pools: TensorFlow's defaults (not planned)"
    if spec["planned_pools"]:
        pools = plan_step_threads(preset().trainer)  # before TensorFlow's runtime starts, as tx-train
    size = RealPathSize(**{**spec["size"], "model": tuple(tuple(knob) for knob in spec["size"]["model"])})
    row = real_path_row(size, spec["seed"], spec["every_position"])
    channel.answer({**row, "planned_pools": spec["planned_pools"], "thread_pools": pools})


def real_path_in_own_process(
    size: RealPathSize, seed: int = 0, every_position: bool = False, planned_pools: bool = True
) -> dict:
    """`real_path_row(size, seed, every_position)` in a fresh process whose thread pools are tx-train's
    plan (`planned_pools`) or TensorFlow's defaults; the row, with `planned_pools` and the plan's line
    (`thread_pools`). Raises `WorkerFailed` when the worker ends without it."""
    spec = {
        "size": asdict(size),
        "seed": seed,
        "every_position": every_position,
        "planned_pools": planned_pools,
    }
    return worker_answer(ROW, spec, "real-path process")
