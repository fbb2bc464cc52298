"""run.json: which tx_keras wrote a run folder, in which format, with which config.

A restart continues a run only when it can do so faithfully: the folder's format is the one this
version reads and the config is the one the run started with (up to keys that only change how long it
trains or what it logs). Anything else is a `RunFolderError`, printed as one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from tx_keras.run_folder.atomic_write import write_json
from tx_keras.run_folder.flatten import flatten
from tx_keras.run_folder.run_folder_error import RunFolderError

MARKER_NAME = "run.json"
# Bump when checkpoints, run.json or the event-file layout change in a way older folders cannot follow.
RUN_FORMAT = 1
# Config keys a resumed run may change: they extend the run or change what is logged, not what is learnt.
RESUMABLE_CHANGES = (
    "trainer.epochs",
    "trainer.max_steps",  # a step budget extends or ends the run, as epochs do
    "trainer.checkpoint_every",
    "trainer.checkpoint_every_minutes",
    "trainer.objective",
    "trainer.backend",  # checkpoints are plain arrays: a run continues on the other backend
    "logging",
    "resume",
    "seeds",  # a sweep's seed count: each job has its own `seed`
    # Where the steps run, not what they compute: the global batch is the same on any device count.
    "trainer.distribution",
    "trainer.devices",
    "trainer.num_processes",
    "trainer.process_id",
    "trainer.coordinator",
    "export",  # what the end of the run decodes and writes, not what it learns
)
# Config keys added since RUN_FORMAT 1, with the value that gives the behaviour from before they existed: a
# folder started without one continues under a command that keeps that value (any other value is a change).
ADDED_KEYS = {
    "model.ffn_impl": "dense",
    "model.norm_impl": "layer_norm",
    "seeds": 1,
    "trainer.max_train_cpu_minutes": None,
}


def read_marker(run_dir: Path) -> dict[str, Any] | None:
    """The folder's run.json (None if there is none), after checking this version can continue it."""
    path = run_dir / MARKER_NAME
    if not path.exists():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
        run_format, version = marker["format"], marker["tx_keras_version"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise RunFolderError(
            f"{path} is unreadable ({type(error).__name__}); this folder cannot be resumed, "
            "use a new run folder"
        ) from None
    if run_format != RUN_FORMAT:  # first: another format may keep its config elsewhere
        raise RunFolderError(
            f"{run_dir} was written by tx_keras {version} (run format {run_format}); tx_keras "
            f"{package_version('tx_keras')} reads run format {RUN_FORMAT}: resume it with tx_keras {version} "
            "or start a new run folder"
        )
    config = marker.get("config")
    if not isinstance(config, dict):  # a resume compares it key by key with the command's config
        raise RunFolderError(
            f"{path} holds no config (its `config` is {json.dumps(config)[:40]}); this folder cannot be "
            "resumed, use a new run folder"
        )
    return marker


def write_marker(run_dir: Path, config: Mapping[str, Any]) -> None:
    """Mark `run_dir` as a tx_keras run of this format, started with the resolved `config`."""
    marker = {"format": RUN_FORMAT, "tx_keras_version": package_version("tx_keras"), "config": config}
    write_json(run_dir / MARKER_NAME, marker)


def _resumable(key: str) -> bool:
    return any(key == allowed or key.startswith(f"{allowed}.") for allowed in RESUMABLE_CHANGES)


def check_same_config(run_dir: Path, started: Mapping[str, Any], now: Mapping[str, Any]) -> None:
    """Refuse to continue a run under a config that would change what it learns."""
    after = flatten(now)
    before = {**{key: value for key, value in ADDED_KEYS.items() if key in after}, **flatten(started)}
    changed = sorted(
        key
        for key in before.keys() | after.keys()
        if not _resumable(key) and before.get(key, "<unset>") != after.get(key, "<unset>")
    )
    if changed:
        key = changed[0]
        more = f" (and {len(changed) - 1} more key(s))" if len(changed) > 1 else ""
        raise RunFolderError(
            f"{run_dir} was started with {key}={before.get(key, '<unset>')!r}, this command has "
            f"{key}={after.get(key, '<unset>')!r}{more}; rerun it with the same overrides, "
            "or use a new run folder"
        )
