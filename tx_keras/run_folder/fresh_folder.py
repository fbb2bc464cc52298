"""A new folder of its own for each run named by the clock, even for runs started in the same second.

Runs started together (a shell loop, a cluster array job) resolve the default `outputs/<date>/<time>` to
the same name. Creating the folder is the claim: `mkdir` succeeds for exactly one process, and the others
take the next free name with a suffix (`12-00-00-1`, `12-00-00-2`), which sorts after the plain name and
before the next second's.
"""

from __future__ import annotations

from pathlib import Path

CLOCK_INTERPOLATION = "${now:"  # Hydra's time resolver: a folder named with it is a new one per run


def claim_fresh_folder(path: Path) -> Path:
    """Create `path`, or `path-1`, `path-2`, ... if taken, and return the one created here."""
    path = Path(path)
    candidate, suffix = path, 0
    while True:
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            suffix += 1
            candidate = path.with_name(f"{path.name}-{suffix}")
