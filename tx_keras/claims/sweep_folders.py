"""Which finished sweep folder belongs to which claim: a folder named on the command line, or under a sweeps
root such as outputs/sweeps the newest `claim_<name>/<date>_<time>/` with runs (or the one picked), with
every other sweep found for that claim listed, so no older or newer sweep is passed over silently."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ClaimSweeps:
    """The sweep folder judged for a claim and every sweep folder with runs found for it, newest first."""

    judged: Path
    found: tuple[Path, ...]


def _with_runs(claim_dir: Path) -> list[Path]:
    """The sweep folders of `claim_dir` that hold runs, newest first (`<date>_<time>` names sort by time)."""
    folders = sorted((child for child in claim_dir.iterdir() if child.is_dir()), reverse=True)
    return [folder for folder in folders if collect_runs(folder)]


def parse_picks(picks: list[str]) -> dict[str, str]:
    """`heads=<sweep folder name>` arguments -> {claim: sweep folder name}."""
    parsed = {}
    for pick in picks:
        name, _, folder = pick.partition("=")
        if not folder or name not in CLAIMS:
            raise ClaimsError(
                f"--pick {pick!r}: write CLAIM=SWEEP_FOLDER_NAME, CLAIM one of {', '.join(CLAIMS)}"
            )
        parsed[name] = folder
    return parsed


def find_sweeps(paths: list[Path], picks: Mapping[str, str] | None = None) -> dict[str, ClaimSweeps]:
    """Claim name -> its sweeps, in the order of CLAIMS: under a sweeps root the newest with runs is
    judged unless `picks` names another. Raises ClaimsError for a missing folder, a folder without runs
    or claim sweeps, a sweep of no known claim, one claim given twice, or a pick that was not found."""
    found: dict[str, ClaimSweeps] = {}
    picks = dict(picks or {})

    def add(name: str, folders: list[Path]) -> None:
        if name not in CLAIMS:
            raise ClaimsError(f"{folders[0]} is a sweep of claim {name!r}; known claims: {', '.join(CLAIMS)}")
        if name in found:
            raise ClaimsError(f"claim {name!r} is given twice: {found[name].judged} and {folders[0]}")
        judged = folders[0]
        if name in picks:
            wanted = picks.pop(name)
            chosen = [folder for folder in folders if folder.name == wanted]
            if not chosen:
                names = ", ".join(folder.name for folder in folders)
                raise ClaimsError(f"--pick {name}=...: no such sweep with runs; found: {names}")
            judged = chosen[0]
        found[name] = ClaimSweeps(judged, tuple(folders))

    for path in paths:
        if not path.is_dir():
            raise ClaimsError(f"{path} is not a folder")
        if collect_runs(path):
            name = claim_of(path)
            if name is None:
                raise ClaimsError(f"{path} is not a claim sweep (run one with tx-train sweep=claim_<name>)")
            add(name, [path])
            continue
        claim_dirs = sorted(
            child for child in path.iterdir() if child.is_dir() and child.name.startswith("claim_")
        )
        sweeps = [(d.name.removeprefix("claim_"), _with_runs(d)) for d in claim_dirs]
        sweeps = [(name, folders) for name, folders in sweeps if folders]
        if not sweeps:
            raise ClaimsError(f"{path} holds no tx-train runs and no claim_<name>/ sweep folders with runs")
        for name, folders in sweeps:
            add(name, folders)
    if picks:
        raise ClaimsError(f"--pick {next(iter(picks))}=...: no sweep of that claim was found")
    return {name: found[name] for name in CLAIMS if name in found}
