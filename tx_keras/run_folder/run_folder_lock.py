"""Hydra callback: each run and each sweep gets a folder of its own and writes it alone.

Runs before Hydra creates the folder, opens train.log or writes `.hydra/`: a process that finds the
folder in use by another stops there, in one line, having changed nothing in it. A folder named by the
clock (the default `outputs/<date>/<time>`, a sweep's `.../${now:...}`) is a new run's: when another
run started in the same second took the name, this one takes the next free suffix. A folder named
explicitly (`hydra.run.dir=...`, `resume=RUN_DIR`, `hydra.sweep.dir=...`) may be continued, by one
process at a time. A sweep's job folders are locked by the job itself (cli/train.py), after Hydra's
`.hydra/` of the job: Hydra has no earlier hook per job, and the sweep folder's lock keeps a second sweep
out already.

Hydra turns an exception in a callback into a warning and goes on, so a refusal is printed here and ends
the process (exit 2) itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from tx_keras.run_folder.disk_fault import exit_on_disk_fault
from tx_keras.run_folder.fresh_folder import CLOCK_INTERPOLATION, claim_fresh_folder
from tx_keras.run_folder.resume_argv import quoted
from tx_keras.run_folder.run_lock import RunFolderInUse, hold


def _claim(config: DictConfig, mode: str) -> Path | None:
    """Hold `hydra.<mode>.dir`; a clock-named one is first claimed afresh and written back into the
    config. Returns the claimed folder when it replaced the configured name."""
    node = config.hydra[mode]
    raw = str(OmegaConf.to_container(node, resolve=False)["dir"])
    try:
        if CLOCK_INTERPOLATION not in raw:
            hold(Path(node.dir))
            return None
        folder = claim_fresh_folder(Path(node.dir))
        hold(folder)
    except RunFolderInUse as error:
        print(f"tx-train: error: {error}", file=sys.stderr)
        sys.exit(2)
    except OSError as error:
        exit_on_disk_fault(error, "run the same command again")
        raise
    with read_write(node):
        node.dir = str(folder)
    return folder


class RunFolderLock(Callback):
    """Locks the run folder (a single run) or the sweep folder (a sweep) before Hydra writes into it."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _claim(config, "run")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        folder = _claim(config, "sweep")
        if folder is not None:  # each job's config is composed again from these overrides: keep the claim
            with read_write(config.hydra), open_dict(config.hydra):
                config.hydra.overrides.hydra.append(f"hydra.sweep.dir={quoted(folder)}")
