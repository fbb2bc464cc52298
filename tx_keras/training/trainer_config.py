"""The `trainer` config group's keys as dataclasses: their types and defaults in one place.

Hydra validates conf/trainer/*.yaml against it (conf/__init__.py registers it as `schema/trainer`, as it
does ModelConfig and the data schemas), so an unknown key or a wrong type fails while the config is
composed. The value rules (ranges, choices) and the rules that span groups are tx_keras/config_check.py's.
Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EarlyStoppingConfig:
    """`trainer.early_stopping`: stop when the validation score has stopped improving."""

    patience: int | None = 2  # epochs without improvement before stopping; None = off (all epochs)
    monitor: str = "val_exact_match"  # the epoch log watched (config_check.py: MONITORS)
    min_delta: float = 0.0  # a change smaller than this is no improvement
    stop_at: float | None = 1.0  # also stop as soon as `monitor` reaches this; None = never
    in_sweeps: bool = False  # sweep jobs train all their epochs unless true


@dataclass(frozen=True)
class TrainerConfig:
    """Optimisation: Adam on the paper's warm-up + inverse-sqrt schedule (or a constant rate)."""

    epochs: int = 6  # passes over the training split
    max_train_minutes: float | None = None  # stop training after this many minutes; None = off
    max_steps: int | None = None  # stop training after this many optimizer steps; None = off
    batch_size: int = 64  # sentence pairs per step
    batching: str = "fixed"  # fixed | bucket (tx_keras/data/batching/__init__.py)
    batch_tokens: int | None = None  # bucket only: rows per batch = this // bucket width
    shape_classes: int | str | None = (
        "auto"  # auto | bucket only: batch widths chosen per split (data/batching/shape_classes.py)
    )
    schedule: str = "noam"  # noam | constant (tx_keras/training/choices.py)
    cooldown: float = 0.0  # decay the rate linearly to 0 over this last share of training
    warmup_steps: int = 400  # linear warm-up steps (>= 1 for noam)
    lr_scale: float = 0.5  # noam: multiplies the schedule
    learning_rate: float = 0.001  # constant: the learning rate after the warm-up
    label_smoothing: float = 0.0  # target probability spread over the vocabulary
    clip_norm: float | None = None  # clip the global gradient norm to this; None = no clipping
    jit_compile: bool | str = "auto"  # XLA: auto (on with a GPU, off on a CPU) | true | false (not on JAX)
    precision: str = "auto"  # the Keras dtype policy (tx_keras/training/choices.py)
    step_parts: int | str = "auto"  # auto | N: row parts of a graph step (tx_keras/training/step_threads.py)
    deterministic: bool = False  # bit-identical reruns (training/determinism.py), slower
    backend: str = "tensorflow"  # the Keras backend: tensorflow | jax (tx_keras/runtime/keras_backend.py)
    distribution: str = "none"  # none | data_parallel (tx_keras/training/distribution.py)
    devices: int | None = None  # data_parallel: local devices per process; None = all (a CPU: 1)
    num_processes: int | None = None  # data_parallel: processes of the run; None = environment, else 1
    process_id: int | None = None  # data_parallel: this process's index; None = environment, else 0
    coordinator: str | None = None  # data_parallel: process 0's HOST:PORT; None = environment
    checkpoint_every: int = 1  # epochs between checkpoints; 0 = off
    checkpoint_every_minutes: float | None = None  # also a checkpoint inside an epoch this often; None = off
    objective: str = "validation_exact_match"  # the summary metric returned to a sweeper
    early_stopping: EarlyStoppingConfig = field(default_factory=EarlyStoppingConfig)
