"""A stable 63-bit hash of a normalised sentence and a seed: the same on every machine, Python version and run
(Python's `hash()` of a string is salted per process), so a streamed split and sample never depend on the
order of the file or on anything held in memory."""

from __future__ import annotations

import hashlib
from functools import cache


def source_hash(text: str, seed: int, purpose: str = "split") -> int:
    """An integer in [0, 2**63) drawn from (`purpose`, `seed`, `text`); purposes give independent draws."""
    hasher = _prefixed(purpose, seed).copy()  # BLAKE2b of f"{purpose}|{seed}|{text}", prefix absorbed once
    hasher.update(text.encode())
    return int.from_bytes(hasher.digest(), "big") >> 1


@cache
def _prefixed(purpose: str, seed: int) -> hashlib._Hash:
    return hashlib.blake2b(f"{purpose}|{seed}|".encode(), digest_size=8)
