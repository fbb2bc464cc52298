"""How much of the machine a stretch of work kept busy: the process's CPU time (user + kernel, every
thread) over the wall time it took, beside the cores it may run on.

A training step that leaves cores idle shows here and nowhere else: steps per minute alone cannot tell
"the machine is slow" from "half the machine waits". On a machine shared with other work the figure is
capped by their load too, so it is printed with the cores it is out of.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity; the CPU count where affinity is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class CpuShare:
    """CPU and wall seconds of one stretch of work."""

    wall_s: float
    user_s: float
    system_s: float
    cores: int

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.system_s

    @property
    def cpu_per_wall(self) -> float:
        """Cores kept busy on average: 2.0 is both cores of a 2-core machine all the time."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def kernel_share(self) -> float:
        """The part of the CPU time spent in the kernel (page faults, futexes, I/O)."""
        return self.system_s / self.cpu_s if self.cpu_s > 0 else 0.0

    def fields(self) -> dict[str, float | int]:
        """As summary.json holds them."""
        return {
            "train_cpu_s": round(self.cpu_s, 2),
            "cpu_per_wall": round(self.cpu_per_wall, 3),
            "cores": self.cores,
        }


class CpuClock:
    """Started at creation; `share()` is the CPU and wall time since then."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), os.times()

    def share(self) -> CpuShare:
        cpu = os.times()
        return CpuShare(
            wall_s=time.perf_counter() - self._wall,
            user_s=cpu.user - self._cpu.user,
            system_s=cpu.system - self._cpu.system,
            cores=usable_cores(),
        )
