"""summary.json: the one file that says how a run ended, written so it is never half-written."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

SUMMARY_NAME = "summary.json"


def write_summary(run_dir: Path, summary: dict[str, Any]) -> Path:
    """Write atomically (temp file + rename): a reader sees the old file or the new one, never a torn one."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / SUMMARY_NAME
    handle, temp = tempfile.mkstemp(dir=run_dir, prefix=".summary.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(summary, stream, indent=2, sort_keys=True, allow_nan=True)
        stream.write("\n")
    os.replace(temp, path)
    return path


def read_summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / SUMMARY_NAME).read_text(encoding="utf-8"))
