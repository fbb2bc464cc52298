"""run_folder/: the one atomic writer, the overrides reader, the config flattening and summary.json."""

import json
import os
import subprocess
import sys

import pytest

from tx_keras.run_folder.atomic_write import atomic_file, write_bytes, write_json, write_text
from tx_keras.run_folder.flatten import flatten
from tx_keras.run_folder.overrides import OVERRIDES_PATH, override_values, read_overrides
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.run_folder.run_marker import check_same_config
from tx_keras.run_folder.summary import completed_summary, summary_or_none, write_summary


def test_writes_text_bytes_and_json_whole_with_no_temporary_left(tmp_path):
    write_text(tmp_path / "a" / "note.txt", "héllo\n")
    write_bytes(tmp_path / "a" / "blob.bin", b"\x00\x01")
    write_json(tmp_path / "a" / "data.json", {"b": 1, "a": float("nan")})
    assert (tmp_path / "a" / "note.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "a" / "blob.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "a" / "data.json").read_text() == '{\n  "a": NaN,\n  "b": 1\n}\n'
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["blob.bin", "data.json", "note.txt"]
    assert oct((tmp_path / "a" / "note.txt").stat().st_mode & 0o777) == "0o644"


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "summary.json"
    write_text(target, "old")
    with pytest.raises(TypeError):
        write_json(target, {"not json": object()})
    with pytest.raises(RuntimeError), atomic_file(target) as temp:
        temp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_the_temporary_keeps_the_suffix_and_every_write_is_synced(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    with atomic_file(tmp_path / "model.keras") as temp:
        assert temp.parent == tmp_path and temp.name.endswith(".keras") and temp.name.startswith(".")
        temp.write_bytes(b"x")
    assert len(synced) == 2  # the file, then the folder that holds the new name


def test_overrides_are_read_once_and_badly_formed_ones_are_one_line(tmp_path):
    assert read_overrides(tmp_path) is None
    (tmp_path / OVERRIDES_PATH).parent.mkdir()
    (tmp_path / OVERRIDES_PATH).write_text("- model=tiny\n- +trainer.epochs=3\n- ~logging.probes\n")
    overrides = read_overrides(tmp_path)
    assert overrides == ["model=tiny", "+trainer.epochs=3", "~logging.probes"]
    assert override_values(overrides) == {"model": "tiny", "trainer.epochs": "3"}
    (tmp_path / OVERRIDES_PATH).write_text("model: tiny\n")
    with pytest.raises(RunFolderError, match="is not a list of overrides"):
        read_overrides(tmp_path)
    (tmp_path / OVERRIDES_PATH).write_text("- [unclosed\n")
    with pytest.raises(RunFolderError, match=r"cannot read .*overrides.yaml \((ScannerError|ParserError)\)"):
        read_overrides(tmp_path)


def test_flatten_gives_dotted_keys_and_keeps_lists():
    nested = {"seed": 0, "trainer": {"epochs": 4, "early_stopping": {"patience": None}}, "grid": [1, 2]}
    assert flatten(nested) == {
        "seed": 0,
        "trainer.epochs": 4,
        "trainer.early_stopping.patience": None,
        "grid": [1, 2],
    }
    assert flatten({"heads": 2}, "model.") == {"model.heads": 2}


def test_completed_summary_skips_only_runs_that_finished(tmp_path):
    assert summary_or_none(tmp_path) is None and completed_summary(tmp_path, 4) is None
    write_summary(tmp_path, {"status": "completed", "epochs": 4, "metrics": {}})
    assert json.loads((tmp_path / "summary.json").read_text())["epochs"] == 4
    assert completed_summary(tmp_path, 4) is not None
    assert completed_summary(tmp_path, 8) is None  # asked to train longer: it resumes
    write_summary(tmp_path, {"status": "completed", "epochs": 2, "stopped_by": "time budget"})
    assert completed_summary(tmp_path, 8) is not None
    budget = {"status": "completed", "epochs": 1, "optimizer_steps": 5, "stopped_by": "step budget: ..."}
    write_summary(tmp_path, budget)
    assert completed_summary(tmp_path, 3, max_steps=5) is not None  # the same command: done
    assert completed_summary(tmp_path, 3, max_steps=9) is None  # more steps asked for: it resumes
    assert completed_summary(tmp_path, 3) is None  # no step budget now: the epochs decide
    assert completed_summary(tmp_path, 1) is not None
    write_summary(tmp_path, {"status": "failed", "epochs": 4})
    assert completed_summary(tmp_path, 4) is None
    (tmp_path / "summary.json").write_text("{torn")
    assert summary_or_none(tmp_path) is None


def test_the_start_up_path_and_the_config_check_constants_import_no_tensorflow():
    """`tx-train resume=...` reads the run folder before TensorFlow starts (quiet start-up), and the config
    check reads the trainer's choices, the batchings, components and norm placements without importing
    training's, the pipeline's or the layers' Keras modules."""
    code = (
        "import sys\n"
        "import tx_keras.run_folder.resume_argv, tx_keras.training.run.job\n"
        "import tx_keras.training.trainer_config\n"
        "import tx_keras.run_folder.checkpoint, tx_keras.run_folder.summary, tx_keras.run_folder.overrides\n"
        "import tx_keras.training.run.config_check, tx_keras.data.batching, tx_keras.components\n"
        "import tx_keras.norm_placement\n"
        "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_folder_started_before_a_key_existed_resumes_under_the_value_that_behaves_as_before(tmp_path):
    started = {"model": {"d_model": 32}, "trainer": {"epochs": 1}}  # run.json of a tx_keras before ffn_impl
    now = {"model": {"d_model": 32, "ffn_impl": "dense", "norm_impl": "layer_norm"}, "trainer": {"epochs": 2}}
    check_same_config(tmp_path, started, now)  # trainer.epochs may grow; the new keys keep the old behaviour
    with pytest.raises(RunFolderError, match=r"started with model.ffn_impl='dense', this command has "):
        check_same_config(tmp_path, started, {**now, "model": {**now["model"], "ffn_impl": "my.Gated"}})
    with pytest.raises(RunFolderError, match=r"model.d_model=32, this command has model.d_model=64"):
        check_same_config(tmp_path, started, {**now, "model": {**now["model"], "d_model": 64}})


def test_a_folder_started_before_the_schemas_had_seeds_and_checkpoint_minutes_resumes(tmp_path):
    """The schemas give every config `seeds` and `trainer.checkpoint_every_minutes`: an older run.json
    without them still resumes under their defaults; a time-based checkpoint and the sweep's seed count
    (each job has its own `seed`) may change on a resume."""
    started = {"model": {"d_model": 32}, "trainer": {"epochs": 1}}
    now = {"model": {"d_model": 32}, "trainer": {"epochs": 1, "checkpoint_every_minutes": None}, "seeds": 1}
    check_same_config(tmp_path, started, now)
    check_same_config(tmp_path, started, {**now, "trainer": {"epochs": 1, "checkpoint_every_minutes": 5.0}})
    check_same_config(tmp_path, started, {**now, "seeds": 3})  # a sweep job resumed by hand replays seeds=3


def test_a_folder_started_before_the_cpu_budget_existed_resumes_without_one(tmp_path):
    """trainer.max_train_cpu_minutes (null: no CPU budget, the behaviour before it existed); a budget given
    on the resume would end training at another step, so it is a change."""
    started = {"model": {"d_model": 32}, "trainer": {"epochs": 1}}
    now = {"model": {"d_model": 32}, "trainer": {"epochs": 1, "max_train_cpu_minutes": None}}
    check_same_config(tmp_path, started, now)
    with pytest.raises(RunFolderError, match=r"trainer.max_train_cpu_minutes=None, this command has .*=5\.0"):
        check_same_config(tmp_path, started, {**now, "trainer": {"epochs": 1, "max_train_cpu_minutes": 5.0}})
