"""The Attention tab's run-folder lookups: summary.json is parsed once per version, not at every poll."""

import json
import os

from tx_keras.explorer import run_folders


def _export(folder, name: str, mtime_ns: int) -> None:
    (folder / name / "saved_model").mkdir(parents=True, exist_ok=True)
    (folder / name / "saved_model" / "saved_model.pb").write_bytes(b"pb")
    (folder / "summary.json").write_text(json.dumps({"export": f"{name}/saved_model"}))
    os.utime(folder / "summary.json", ns=(mtime_ns, mtime_ns))


def test_saved_model_reads_summary_once_per_version(tmp_path, monkeypatch):
    reads = []
    real = run_folders.summary_or_none
    monkeypatch.setattr(run_folders, "summary_or_none", lambda folder: reads.append(folder) or real(folder))
    run_folders._exported.cache_clear()
    _export(tmp_path, "first", 1_000_000_000)
    assert run_folders.saved_model(tmp_path) == tmp_path / "first" / "saved_model"
    assert run_folders.saved_model(tmp_path) == tmp_path / "first" / "saved_model"
    assert len(reads) == 1  # the second poll used the parsed version
    _export(tmp_path, "second", 2_000_000_000)  # tx-export wrote a new summary
    assert run_folders.saved_model(tmp_path) == tmp_path / "second" / "saved_model"
    assert len(reads) == 2
    (tmp_path / "summary.json").unlink()  # no summary: the default export folder, if any
    assert run_folders.saved_model(tmp_path) is None
