"""The `trainer` config group's keys as dataclasses: their types, defaults and value rules in one place.

Hydra validates conf/trainer/*.yaml against it (conf/__init__.py registers it as `schema/trainer`, as it
does ModelConfig and the data schemas), so an unknown key or a wrong type fails while the config is
composed. Each key's range or choices are on its field (tx_keras/config_rules.py) and the rules between
the trainer's keys in `__post_init__`, so building one (`OmegaConf.to_object(cfg.trainer)`) is checking
it; the rules that span groups are the config check's (training/run/config_check.py). Imports nothing
heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tx_keras.config_rules import (
    above,
    at_least,
    auto_or_count,
    between,
    check_rules,
    fraction,
    one_of,
    or_null,
    ruled,
    share,
)
from tx_keras.data.batching import BATCHING
from tx_keras.runtime.compiled_step import step_is_compiled
from tx_keras.runtime.keras_backend import BACKENDS, missing_backend
from tx_keras.training.processes.process_group import ProcessGroup
from tx_keras.user_error import ConfigError, UserError

# The summary metrics a run can return to a sweeper (bleu, chrf: real-text tasks only).
OBJECTIVES = tuple(
    f"{split}_{metric}"
    for split in ("validation", "test")
    for metric in ("exact_match", "accuracy", "loss", "bleu", "chrf")
)
# The epoch logs early stopping can watch: val_exact_match is computed each epoch only when watched.
MONITORS = ("val_exact_match", "val_loss", "val_accuracy", "loss", "accuracy")


def _installed(value: str) -> str | None:
    """A backend whose package is installed here."""
    return one_of(*BACKENDS)(value) or missing_backend(value)


@dataclass(frozen=True)
class EarlyStoppingConfig:
    """`trainer.early_stopping`: stop when the validation score has stopped improving."""

    patience: int | None = ruled(2, or_null(between(1, 10**6)))  # epochs without improvement; None = off
    monitor: str = ruled("val_exact_match", one_of(*MONITORS))  # the epoch log watched
    min_delta: float = ruled(0.0, at_least(0))  # a change smaller than this is no improvement
    stop_at: float | None = 1.0  # also stop as soon as `monitor` reaches this; None = never
    in_sweeps: bool = False  # sweep jobs train all their epochs unless true

    def __post_init__(self) -> None:
        check_rules(self, "trainer.early_stopping")


@dataclass(frozen=True)
class TrainerConfig:
    """Optimisation: Adam on the paper's warm-up + inverse-sqrt schedule (or a constant rate), and how
    long, on what, and where the run trains. conf/trainer/default.yaml explains each key."""

    epochs: int = ruled(6, between(1, 10**6))  # passes over the training split
    # stop training after this many minutes of wall clock; None = off
    max_train_minutes: float | None = ruled(None, or_null(above(0, "for no time limit")))
    # stop training after this many minutes of the process's CPU time (every thread); None = off
    max_train_cpu_minutes: float | None = ruled(None, or_null(above(0, "for no CPU-time limit")))
    max_steps: int | None = ruled(None, or_null(between(1, 10**12)))  # stop after this many optimizer steps
    batch_size: int = ruled(64, between(1, 10**6))  # sentence pairs per step
    batching: str = ruled("fixed", one_of(*BATCHING))  # fixed | bucket (tx_keras/data/batching/)
    # bucket only: rows per batch = this // bucket width
    batch_tokens: int | None = ruled(None, or_null(between(1, 10**9, "for rows by batch_size")))
    # auto | N batch widths chosen per split (bucket only: data/batching/shape_classes.py) | None
    shape_classes: int | str | None = ruled("auto", auto_or_count(1024, null=True))
    # the paper's warm-up + inverse-sqrt decay, or a constant rate after a linear warm-up
    schedule: str = ruled("noam", one_of("noam", "constant"))
    cooldown: float = ruled(0.0, share)  # decay the rate linearly to 0 over this last share of training
    warmup_steps: int = ruled(400, between(0, 10**9))  # linear warm-up steps (>= 1 for noam)
    lr_scale: float = ruled(0.5, at_least(1e-12))  # noam: multiplies the schedule
    learning_rate: float = ruled(0.001, at_least(1e-12))  # constant: the learning rate after the warm-up
    label_smoothing: float = ruled(0.0, fraction)  # target probability spread over the vocabulary
    # clip the global gradient norm to this; None = no clipping
    clip_norm: float | None = ruled(None, or_null(above(0, "to turn clipping off")))
    # XLA: auto (on with a GPU, off on a CPU) | true | false (not on JAX)
    jit_compile: bool | str = ruled("auto", one_of(True, False, "auto"))
    # the Keras dtype policy; auto picks by hardware and by whether the step is compiled (precision.py)
    precision: str = ruled("auto", one_of("float32", "mixed_bfloat16", "mixed_float16", "auto"))
    # auto | N: row parts of a graph step (tx_keras/training/step/step_threads.py)
    step_parts: int | str = ruled("auto", auto_or_count(4096))
    deterministic: bool = False  # bit-identical reruns (training/run/determinism.py), slower
    backend: str = ruled("tensorflow", _installed)  # the Keras backend: tensorflow | jax
    # none | data_parallel: every device of every process, each step's batch split between them
    distribution: str = ruled("none", one_of("none", "data_parallel"))
    devices: int | None = ruled(None, or_null(between(1, 10**4)))  # data_parallel: local devices per process
    num_processes: int | None = ruled(None, or_null(between(1, 10**5)))  # data_parallel: None = environment
    process_id: int | None = ruled(None, or_null(between(0, 10**5)))  # data_parallel: None = environment
    coordinator: str | None = None  # data_parallel: process 0's HOST:PORT; None = environment
    checkpoint_every: int = ruled(1, between(0, 10**6))  # epochs between checkpoints; 0 = off
    # also a checkpoint inside an epoch this often; None = off
    checkpoint_every_minutes: float | None = ruled(None, or_null(above(0, "for no time-based checkpoints")))
    objective: str = ruled("validation_exact_match", one_of(*OBJECTIVES))  # returned to a sweeper
    early_stopping: EarlyStoppingConfig = field(default_factory=EarlyStoppingConfig)

    def __post_init__(self) -> None:
        check_rules(self, "trainer")
        if self.schedule == "noam" and self.warmup_steps < 1:
            raise ConfigError(
                f"trainer.warmup_steps={self.warmup_steps} must be >= 1 with trainer.schedule=noam "
                "(warm-up 0 needs trainer.schedule=constant)"
            )
        if self.backend == "jax" and self.jit_compile is False:
            raise ConfigError(
                "trainer.jit_compile=false with trainer.backend=jax: JAX would run every op of every step "
                "uncompiled (~50x slower); use auto or true (JAX always compiles), or backend=tensorflow"
            )
        self._check_step_parts()
        tokens = self.batch_tokens
        if tokens is not None and self.batching != "bucket":
            raise ConfigError(f"trainer.batch_tokens={tokens} needs trainer.batching=bucket")
        if self.shape_classes not in ("auto", None) and self.batching != "bucket":
            raise ConfigError(
                f"trainer.shape_classes={self.shape_classes} needs trainer.batching=bucket (or null)"
            )
        self._check_distribution()

    @property
    def process_group(self) -> ProcessGroup:
        """The processes this run trains in: its keys, else the launcher's environment."""
        return ProcessGroup.of(self)

    def _check_step_parts(self) -> None:
        """Row parts (models/row_parts_step.py) cut TensorFlow's graph step of one replica only."""
        parts = self.step_parts
        if parts in ("auto", 1):
            return
        if step_is_compiled(self):
            setting = "backend=jax" if self.backend == "jax" else "jit_compile=true"
            raise ConfigError(
                f"trainer.step_parts={parts} with trainer.{setting}: a compiled step is scheduled by XLA, "
                "not cut into parts; use step_parts=auto or 1, or TensorFlow's graph step"
            )
        if self.distribution != "none":
            raise ConfigError(
                f"trainer.step_parts={parts} with trainer.distribution={self.distribution}: the replicas "
                "already run side by side; use step_parts=auto or 1"
            )

    def _check_distribution(self) -> None:
        """The distribution keys together: where the processes come from, and what each engine can run."""
        given = [key for key in ("devices", "num_processes", "process_id", "coordinator") if _set(self, key)]
        if self.distribution == "none" and given:
            raise ConfigError(
                f"trainer.{given[0]}={getattr(self, given[0])!r} needs trainer.distribution=data_parallel"
            )
        try:
            group = self.process_group
        except UserError as error:
            raise ConfigError(str(error)) from None
        if not group.is_multi_process:
            return
        if self.backend != "jax":
            raise ConfigError(
                f"{group.count} processes with trainer.distribution=data_parallel need trainer.backend=jax: "
                "Keras 3's fit fails under TensorFlow's MultiWorkerMirroredStrategy (keras-team/keras#20585)"
            )
        clocked = [
            key
            for key in ("max_train_minutes", "max_train_cpu_minutes", "checkpoint_every_minutes")
            if _set(self, key)
        ]
        if clocked:
            raise ConfigError(
                f"trainer.{clocked[0]}={getattr(self, clocked[0])} is decided by each process's own clock, "
                "and several processes must stop and checkpoint at the same step; use epochs or max_steps, "
                "and checkpoint_every"
            )
        if self.batching == "bucket":
            raise ConfigError(
                "trainer.batching=bucket varies the rows of a batch, which several processes cannot split "
                "evenly; use trainer.batching=fixed with several processes"
            )


def _set(config: Any, key: str) -> bool:
    return getattr(config, key) is not None
