"""Several processes become one JAX run: `jax.distributed.initialize` (what `keras.distribution.initialize`
calls), with a short heartbeat so that the death of one process ends the others instead of leaving them
waiting in a collective.

Must run before JAX computes anything (training/job.py calls it right after the engine starts).
"""

from __future__ import annotations

from tx_keras.training.process_group import ProcessGroup

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
