"""How busy the rest of the machine was while tx-bench timed: the share of the figures that is waiting.

A step's wall time on a machine that others load counts the waiting; its CPU time counts the work. Which
of the two a ratio should be read by depends on whether anything else ran, so tx-bench measures it:
the machine's busy CPU seconds (/proc/stat, every process, plus time a hypervisor gave to other guests)
minus tx-bench's own, over the wall time, is the number of cores others kept busy.
"""

from __future__ import annotations

import os
from pathlib import Path

# Cores others kept busy above which a run counts as shared and CPU time becomes the primary figure: a
# quiet Linux machine's daemons use a few hundredths of a core.
SHARED_CORES = 0.2


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (user, nice, system, irq, softirq, steal),
    or None where /proc/stat is not there (not Linux)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def others_cores(
    busy_before: float | None, busy_after: float | None, own_cpu_s: float, wall_s: float
) -> float | None:
    """Cores kept busy by everything but tx-bench over `wall_s` seconds, never below 0 (the clocks tick
    at different rates); None when the machine's busy time is unknown."""
    if busy_before is None or busy_after is None or wall_s <= 0:
        return None
    return max(0.0, (busy_after - busy_before - own_cpu_s) / wall_s)


def primary_measure(cores: float | None) -> str:
    """`cpu` when others kept more than SHARED_CORES busy (or when that is unknown), else `wall`."""
    return "wall" if cores is not None and cores <= SHARED_CORES else "cpu"
