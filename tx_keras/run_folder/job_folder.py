"""A sweep job's folder name, `3_model.num_heads=8`: the job's number, then its overrides as Hydra writes
them (`hydra.job.override_dirname`). Two things Hydra's own name gets wrong are fixed here: a value with a
`/` (a corpus path) would nest folders, and a command with many overrides (a preset plus a budget, seeds
and a corpus) passes the 255-byte file-name limit, which ends the sweep in an OSError before its first job.
The number alone already makes a name unique in its sweep, so the rest may be cut; it is cut the same way
every time, so a rerun of the sweep finds each job's folder again."""

from __future__ import annotations

import hashlib

from omegaconf import OmegaConf

RESOLVER = "tx_job_folder"  # conf/hydra/default.yaml: subdir: ${tx_job_folder:${hydra.job.num},...}
MAX_BYTES = 200  # of the name: under the usual 255-byte limit, with room for a temporary suffix
HASH_CHARS = 8  # of the sha1 of the whole overrides, ending a cut name: two cuts of one prefix differ


def job_folder(number: int | str, overrides: str) -> str:
    """`{number}_{overrides}` with `/` read as `_`, cut to MAX_BYTES (a UTF-8 character is never split)."""
    name = f"{number}_{overrides.replace('/', '_')}" if overrides else str(number)
    encoded = name.encode("utf-8")
    if len(encoded) <= MAX_BYTES:
        return name
    digest = hashlib.sha1(overrides.encode("utf-8")).hexdigest()[:HASH_CHARS]
    head = encoded[: MAX_BYTES - HASH_CHARS - 1].decode("utf-8", errors="ignore")
    return f"{head}~{digest}"


def register_job_folder() -> None:
    """Make the resolver known to OmegaConf (every process that composes or launches a job calls it)."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, job_folder)
