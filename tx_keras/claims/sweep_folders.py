"""Which finished sweep folder belongs to which claim: a folder named on the command line, or the newest
`claim_<name>/<date>_<time>/` under a sweeps root such as outputs/sweeps."""

from __future__ import annotations

from pathlib import Path

from tx_keras.claims.definitions import CLAIMS
from tx_keras.comparison import collect_runs
from tx_keras.run_folder.overrides import read_overrides
from tx_keras.user_error import UserError


class ClaimsError(UserError):
    """A folder tx-claims cannot use, said in one line."""


def claim_of(sweep_dir: Path) -> str | None:
    """The claim a sweep folder ran: its jobs' `sweep=claim_<name>` override, else a folder name
    `claim_<name>` (the sweep's own or its parent's, as `tx-train sweep=claim_<name>` names them)."""
    for job in sorted(child for child in sweep_dir.iterdir() if child.is_dir()):
        for item in read_overrides(job) or []:
            if item.startswith("sweep=claim_"):
                return item.split("=", 1)[1].removeprefix("claim_")
    for folder in (sweep_dir, sweep_dir.parent):
        if folder.name.startswith("claim_"):
            return folder.name.removeprefix("claim_")
    return None


def _newest_with_runs(claim_dir: Path) -> Path | None:
    for folder in sorted((child for child in claim_dir.iterdir() if child.is_dir()), reverse=True):
        if collect_runs(folder):
            return folder
    return None


def find_sweeps(paths: list[Path]) -> dict[str, Path]:
    """Claim name -> sweep folder, in the order of CLAIMS. Raises ClaimsError for a missing folder, a
    folder without runs or claim sweeps, a sweep of no known claim, or one claim given twice."""
    found: dict[str, Path] = {}

    def add(name: str, folder: Path) -> None:
        if name not in CLAIMS:
            raise ClaimsError(f"{folder} is a sweep of claim {name!r}; known claims: {', '.join(CLAIMS)}")
        if name in found:
            raise ClaimsError(f"claim {name!r} is given twice: {found[name]} and {folder}")
        found[name] = folder

    for path in paths:
        if not path.is_dir():
            raise ClaimsError(f"{path} is not a folder")
        if collect_runs(path):
            name = claim_of(path)
            if name is None:
                raise ClaimsError(f"{path} is not a claim sweep (run one with tx-train sweep=claim_<name>)")
            add(name, path)
            continue
        claim_dirs = sorted(
            child for child in path.iterdir() if child.is_dir() and child.name.startswith("claim_")
        )
        sweeps = [(d.name.removeprefix("claim_"), _newest_with_runs(d)) for d in claim_dirs]
        sweeps = [(name, folder) for name, folder in sweeps if folder is not None]
        if not sweeps:
            raise ClaimsError(f"{path} holds no tx-train runs and no claim_<name>/ sweep folders with runs")
        for name, folder in sweeps:
            add(name, folder)
    return {name: found[name] for name in CLAIMS if name in found}
