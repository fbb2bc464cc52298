"""Which process of a multi-process run this one is, and where process 0 (the coordinator) listens.

A data-parallel run on several machines (or several processes of one) starts the same `tx-train` command
once per process; each must learn the coordinator's address, the process count and its own index before
the engine starts. They come from the `trainer` keys first, else from the environment a launcher sets:
Keras' own variables (`KERAS_DISTRIBUTION_JOB_ADDRESSES`, `KERAS_DISTRIBUTION_NUM_PROCESSES`,
`KERAS_DISTRIBUTION_PROCESS_ID`, read by `keras.distribution.initialize` too), then SLURM's
(`SLURM_NTASKS`, `SLURM_PROCID`: one task per process). Only process 0 writes the run folder.

Imports nothing heavy: the Hydra callback that keeps the other processes out of the run folder reads it
before Keras starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tx_keras.user_error import UserError

COORDINATOR_VARIABLES = ("KERAS_DISTRIBUTION_JOB_ADDRESSES",)
COUNT_VARIABLES = ("KERAS_DISTRIBUTION_NUM_PROCESSES", "SLURM_NTASKS")
INDEX_VARIABLES = ("KERAS_DISTRIBUTION_PROCESS_ID", "SLURM_PROCID")


def _from_environment(names: tuple[str, ...], environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The first of `names` set in `environ`, as (name, value)."""
    for name in names:
        if environ.get(name, "").strip():
            return name, environ[name].strip()
    return None


def _integer(key: str, value: Any, source: str | None) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        where = f"${source}" if source else f"trainer.{key}"
        raise UserError(f"{where}={value!r} must be a whole number") from None


@dataclass(frozen=True)
class ProcessGroup:
    """This process's place in the run: `index` of `count`, all joining `coordinator` (host:port)."""

    count: int = 1
    index: int = 0
    coordinator: str | None = None

    @property
    def is_writer(self) -> bool:
        """Process 0 writes the run folder (events, summary, checkpoints, export); the others nothing."""
        return self.index == 0

    @property
    def is_multi_process(self) -> bool:
        return self.count > 1

    @classmethod
    def of(cls, trainer: Any, environ: Mapping[str, str] | None = None) -> ProcessGroup:
        """The group `trainer` (its keys) and the environment describe; one process when neither says more.

        Only with `trainer.distribution=data_parallel`: a run without it is one process whatever the
        environment says (a SLURM job of one task, a shell that exported Keras' variables for another
        program). Raises `UserError` in one line for values that cannot describe a group.
        """
        if trainer.distribution != "data_parallel":
            return cls()
        environ = os.environ if environ is None else environ
        count_source = index_source = None
        count, index, coordinator = trainer.num_processes, trainer.process_id, trainer.coordinator
        if count is None and (found := _from_environment(COUNT_VARIABLES, environ)):
            count_source, count = found
        if index is None and (found := _from_environment(INDEX_VARIABLES, environ)):
            index_source, index = found
        if coordinator is None and (found := _from_environment(COORDINATOR_VARIABLES, environ)):
            coordinator = found[1].split(",")[0]  # Keras' variable lists every job: the first coordinates
        count = _integer("num_processes", 1 if count is None else count, count_source)
        index = _integer("process_id", 0 if index is None else index, index_source)
        group = cls(count, index, coordinator)
        group.check()
        return group

    def check(self) -> None:
        """Refuse, in one line, a group that cannot start."""
        if self.count < 1:
            raise UserError(f"trainer.num_processes={self.count} must be >= 1")
        if not 0 <= self.index < self.count:
            raise UserError(
                f"trainer.process_id={self.index} must be in 0..{self.count - 1} "
                f"(trainer.num_processes={self.count})"
            )
        if self.count > 1 and not self.coordinator:
            raise UserError(
                f"trainer.num_processes={self.count} needs trainer.coordinator=HOST:PORT (process 0's "
                "address, the same for every process) or $KERAS_DISTRIBUTION_JOB_ADDRESSES"
            )
        if self.coordinator and not _host_port(self.coordinator):
            raise UserError(f"trainer.coordinator={self.coordinator!r} must be HOST:PORT, e.g. 10.0.0.1:9876")


def _host_port(address: str) -> bool:
    host, _, port = address.rpartition(":")
    return bool(host) and port.isdigit() and 0 < int(port) < 65536


# Seconds without a heartbeat after which the coordinator declares a process dead and the others stop.
HEARTBEAT_TIMEOUT_S = 10
# Seconds process 0 waits for every process to join (a cluster's nodes start a little apart).
JOIN_TIMEOUT_S = 300


def join_processes(group: ProcessGroup) -> None:
    """Join the run's other processes (blocks until all have joined, or JOIN_TIMEOUT_S)."""
    import jax

    jax.distributed.initialize(
        coordinator_address=group.coordinator,
        num_processes=group.count,
        process_id=group.index,
        initialization_timeout=JOIN_TIMEOUT_S,
        heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT_S,
    )
