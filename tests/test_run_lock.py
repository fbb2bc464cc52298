"""One writer per run folder: a second process refuses a folder in use, in one line and without touching
it; runs started in the same second get folders of their own; readers of a folder being written never
crash."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from tests.conftest import TINY, tx_train
from tx_keras.cli.compare import main as compare
from tx_keras.comparison import collect_runs
from tx_keras.explorer.run_folders import run_folder, saved_model
from tx_keras.run_folder.fresh_folder import claim_fresh_folder
from tx_keras.run_folder.overrides import OVERRIDES_PATH
from tx_keras.run_folder.run_folder_lock import RunFolderLock
from tx_keras.run_folder.run_lock import LOCK_NAME, RunFolderInUse, hold, holds, release
from tx_keras.run_folder.run_marker import write_marker
from tx_keras.run_folder.summary import summary_or_none


def _other_lines(stderr):
    """stderr without TensorFlow's C++ log lines (`E0000 ...`: a oneDNN notice on some CPUs)."""
    return [line for line in stderr.splitlines() if not (line[:1] in "EWI" and line[1:5].isdigit())]


@pytest.fixture
def holder(tmp_path):
    """Another process holding a folder's lock, as a running tx-train does."""
    processes = []

    def start(folder: Path) -> subprocess.Popen:
        code = (
            "import sys, time\n"
            "from tx_keras.run_folder.run_lock import hold\n"
            f"hold({str(folder)!r})\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n"
        )
        process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline() == "held\n"
        processes.append(process)
        return process

    yield start
    for process in processes:
        process.kill()
        process.wait()


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_clock_named_folder_that_is_taken_gets_the_next_suffix_in_sorted_order(tmp_path):
    base = tmp_path / "outputs" / "2026-12-02" / "12-00-00"
    claimed = [claim_fresh_folder(base) for _ in range(3)]
    assert [path.name for path in claimed] == ["12-00-00", "12-00-00-1", "12-00-00-2"]
    (tmp_path / "outputs" / "2026-12-02" / "12-00-01").mkdir()
    names = sorted(path.name for path in base.parent.iterdir())
    assert names == ["12-00-00", "12-00-00-1", "12-00-00-2", "12-00-01"]  # started in this order


def test_a_held_folder_is_refused_naming_the_holder_and_freed_when_it_is_killed(tmp_path, holder):
    folder = tmp_path / "run"
    process = holder(folder)
    with pytest.raises(RunFolderInUse) as refused:
        hold(folder)
    assert f"is in use by another tx-train (PID {process.pid} on " in str(refused.value)
    info = json.loads((folder / LOCK_NAME).read_text())
    assert info["pid"] == process.pid and info["started"]
    process.send_signal(signal.SIGKILL)  # the kernel drops the lock with the process: never stale
    process.wait()
    assert hold(folder) and holds(folder) and hold(folder)  # held here now; asking again is a no-op
    assert json.loads((folder / LOCK_NAME).read_text())["pid"] == os.getpid()
    release(folder)
    assert not holds(folder)


def test_tx_train_on_a_folder_in_use_refuses_in_one_line_and_changes_nothing(tmp_path, holder):
    run_dir = tmp_path / "run"
    (run_dir / OVERRIDES_PATH).parent.mkdir(parents=True)
    (run_dir / OVERRIDES_PATH).write_text("".join(f"- {arg}\n" for arg in TINY))
    write_marker(run_dir, {"seed": 0})
    (run_dir / "train.log").write_text("the first run's log\n")
    process = holder(run_dir)
    before = _snapshot(run_dir)
    for arguments in ([*TINY, "seed=2", f"hydra.run.dir={run_dir}"], [f"resume={run_dir}"]):
        result = tx_train(*arguments, cwd=tmp_path)
        assert result.returncode == 2, result.stderr[-2000:]
        assert _other_lines(result.stderr) == [
            f"tx-train: error: {run_dir} is in use by another tx-train (PID {process.pid} on "
            f"{os.uname().nodename}, started {json.loads((run_dir / LOCK_NAME).read_text())['started']}); "
            "wait for it to end, or give this run its own folder"
        ]
        assert _snapshot(run_dir) == before  # no .hydra/ rewritten, no log line, nothing new


def test_a_sweep_folder_named_by_the_clock_is_claimed_afresh_for_every_job(tmp_path):
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        configs = [
            compose(
                config_name="config",
                overrides=[f"hydra.sweep.dir={tmp_path}/sweep/${{now:%Y}}"],
                return_hydra_config=True,
            )
            for _ in range(2)
        ]
    for config in configs:
        RunFolderLock().on_multirun_start(config)
    folders = [Path(config.hydra.sweep.dir) for config in configs]
    assert [folder.name for folder in folders] == [time.strftime("%Y"), time.strftime("%Y") + "-1"]
    assert all(holds(folder) for folder in folders)
    # Each job's config is composed again from these overrides: they name the claimed folder.
    assert configs[1].hydra.overrides.hydra[-1] == f"hydra.sweep.dir='{folders[1]}'"
    for folder in folders:
        release(folder)


@pytest.mark.slow  # three tx-train processes at once: ~33 s loaded
def test_runs_started_together_get_folders_of_their_own_and_readers_never_crash(tmp_path):
    """Two runs of a shell loop, started at once with the same clock-named folder (forced to collide
    here: `${now:%Y}`); while they write, tx-compare's and tx-board's readers poll the folders."""
    arguments = [
        *TINY,
        "trainer.epochs=1",
        "data.num_train=64",
        "logging.diagnostics_every=0",
        "logging.probes=0",
        "export.enabled=false",
        "hydra.run.dir=outputs/${now:%Y}",
    ]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tx_keras.cli.train", *arguments, f"seed={seed}"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    outputs, polls = tmp_path / "outputs", 0
    while any(process.poll() is None for process in processes):
        if outputs.is_dir():
            for record in collect_runs(outputs, nested=True):  # a run being written is read as it stands
                assert record.status in ("unfinished", "completed"), record
                assert record.status == "unfinished" or record.metrics  # never a half-written summary
                assert run_folder(outputs, record.name) in (None, record.path)
                saved_model(record.path)
            polls += 1
        time.sleep(0.2)
    for process in processes:
        _, stderr = process.communicate()
        assert process.returncode == 0, stderr[-2000:]
    assert polls > 5
    year = time.strftime("%Y")
    folders = sorted(outputs.iterdir())
    assert [folder.name for folder in folders] == [year, f"{year}-1"]
    seeds = set()
    for folder in folders:  # each folder is one run's: its summary, its checkpoint, its events
        seed = summary_or_none(folder)["config"]["seed"]
        assert json.loads((folder / "run.json").read_text())["config"]["seed"] == seed
        writers = {path.name.split(".")[-3] for path in folder.rglob("events.out.tfevents.*")}
        assert len(writers) == 1  # one process id in every event file name
        assert (folder / "checkpoints" / "last.npz").is_file()
        seeds.add(seed)
    assert seeds == {1, 2}


def test_a_run_in_progress_with_half_written_files_is_read_as_unfinished(tmp_path, capsys):
    run_dir = tmp_path / "outputs" / "2026-12-02" / "12-00-00"
    (run_dir / OVERRIDES_PATH).parent.mkdir(parents=True)
    (run_dir / OVERRIDES_PATH).write_text("- model=tiny\n- 'data.path=/a b")  # Hydra cut mid-write
    (run_dir / "summary.json").write_text('{"status": "completed", "metr')  # a writer without atomicity
    (record,) = collect_runs(tmp_path / "outputs", nested=True)
    assert (record.status, record.overrides, record.metrics) == ("unfinished", {}, {})
    assert run_folder(tmp_path / "outputs", "2026-12-02/12-00-00") == run_dir.resolve()
    assert saved_model(run_dir) is None  # the torn summary names no export
    compare([str(tmp_path / "outputs")])  # tx-compare: a table, not an error
    assert "unfinished" in capsys.readouterr().out
