"""`tx-train resume=RUN_DIR`: the command line that continues a run folder where it stopped.

Hydra composes the config before any of our code runs, so a resume is a rewrite of the command line:
the run's saved overrides (`RUN_DIR/.hydra/overrides.yaml`), then the user's other arguments (which
win, e.g. `trainer.epochs=20` to train longer), then `hydra.run.dir=RUN_DIR`. The run itself then
checks that the config is the one the folder was started with (run_folder/run_marker.py).
"""

from __future__ import annotations

from pathlib import Path

from tx_keras.run_folder.overrides import OVERRIDES_PATH, override_key, read_overrides
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.run_folder.run_marker import MARKER_NAME, read_marker

_RUN_DIR = "hydra.run.dir"
# Overrides of the first start that must not come back: the folder is given anew, and a sweep's
# overrides would turn the resumed single run into a sweep.
_NOT_REPLAYED = ("hydra", "sweep", "resume")


def quoted(path: Path) -> str:
    """A path as a Hydra override value, whatever characters it holds."""
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _saved_overrides(run_dir: Path, argument: str) -> list[str]:
    try:
        overrides = read_overrides(run_dir)
    except RunFolderError as error:
        raise RunFolderError(f"{argument}: {error}") from None
    if overrides is None:
        raise RunFolderError(f"{argument}: cannot read {run_dir / OVERRIDES_PATH} (FileNotFoundError)")
    return overrides


def resume_argv(argv: list[str]) -> list[str]:
    """`argv` (without the program name) with `resume=RUN_DIR` expanded; unchanged without one."""
    resumes = [arg for arg in argv if "=" in arg and override_key(arg) == "resume"]
    if not resumes or resumes[-1].split("=", 1)[1] in ("", "null"):
        return argv
    argument = resumes[-1]
    run_dir = Path(argument.split("=", 1)[1].strip("'\"")).expanduser().resolve()
    if not run_dir.is_dir():
        what = "is not a folder" if run_dir.exists() else "does not exist"
        raise RunFolderError(f"{argument}: {run_dir} {what}")
    if read_marker(run_dir) is None:
        raise RunFolderError(f"{argument}: {run_dir} is not a tx_keras run folder (it has no {MARKER_NAME})")
    others = [arg for arg in argv if arg not in resumes]
    for arg in others:
        named = Path(arg.split("=", 1)[1].strip("'\"")).resolve() if "=" in arg else None
        if override_key(arg) == _RUN_DIR and named != run_dir:
            raise RunFolderError(f"{argument} and {arg} name different folders; give one of them")
    given = {override_key(arg) for arg in others if "=" in arg}
    replayed = [
        override
        for override in _saved_overrides(run_dir, argument)
        if override_key(override) not in given and override_key(override).split(".")[0] not in _NOT_REPLAYED
    ]
    others = [arg for arg in others if not ("=" in arg and override_key(arg) == _RUN_DIR)]
    return [*replayed, *others, f"{_RUN_DIR}={quoted(run_dir)}", f"resume={quoted(run_dir)}"]
