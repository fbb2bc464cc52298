"""Property-based tests of the run-folder door (issue 65), with Hypothesis: a run's summary.json, run.json,
checkpoint, event files and saved overrides truncated, emptied, or replaced with garbage bytes or JSON of
the wrong shape. tx-compare and tx-translate each answer in one line or skip that run with a note, and
never touch another run's files; `tx-train resume=` answers a damaged folder, finished or interrupted, in
one line, and one it refuses keeps its files (tx-board's tab: tests/test_fuzz_board_runs.py).

The tiny run (tests/conftest.py `tiny_run`) is copied twice into a sweep folder per example, one copy
damaged; the commands' main functions run in this process (the resume stopped where training would
start), and one fresh tx-train process checks a sampled resume end to end. The default run keeps eight
examples of each property (each copies a run and reads it back); `pytest -m slow` runs ten times as many.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.ahead import ahead_fixture, needs
from tests.conftest import main_here, tx_train
from tx_keras.cli import compare, translate
from tx_keras.comparison.sweep_runs import read_run
from tx_keras.export import saved_model_loader
from tx_keras.run_folder import run_lock
from tx_keras.run_folder.summary import completed_summary, summary_or_none

settings.register_profile(
    "run-folders-default",
    max_examples=8,
    deadline=None,
    database=None,  # each failure found becomes a fixed case instead
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile("run-folders-slow", settings.get_profile("run-folders-default"), max_examples=80)
DEFAULT, SLOW = settings.get_profile("run-folders-default"), settings.get_profile("run-folders-slow")

DAMAGED, INTACT = "0_damaged", "1_intact"
# The files a user, an older version or a crash may leave damaged (globs under a run folder).
TARGETS = [
    "summary.json",
    "run.json",
    "checkpoints/last.npz",
    "**/events.out.tfevents*",
    ".hydra/overrides.yaml",
]

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_SUMMARY_KEYS = ["status", "metrics", "epochs", "parameters", "wall_time_s", "reason", "stopped_by", "config"]


@st.composite
def damages(draw, targets: list[str] = TARGETS, keys: list[str] = _SUMMARY_KEYS):
    """(a file glob, what becomes of its bytes): cut, emptied, garbage, or a JSON value of the wrong shape
    (any JSON, or the file's own JSON with some of `keys` holding values of any type)."""
    target = draw(st.sampled_from(targets))
    kind = draw(st.sampled_from(["cut", "empty", "garbage", "json", "json_keys"]))
    if kind == "cut":
        share = draw(st.floats(0, 1, exclude_max=True))
        return target, f"cut to {share:.3f} of its bytes", lambda data: data[: int(len(data) * share)]
    if kind == "empty":
        return target, "emptied", lambda data: b""
    if kind == "garbage":
        garbage = draw(st.binary(max_size=64))
        return target, f"replaced by {garbage!r}", lambda data: garbage
    if kind == "json":
        value = json.dumps(draw(_JSON)).encode()
        return target, f"replaced by {value!r}", lambda data: value
    # A JSON object whose known keys hold values of any type.
    keys = draw(st.dictionaries(st.sampled_from(keys), _JSON, min_size=1, max_size=3))
    return target, f"its JSON updated with {keys!r}", lambda data: _with_keys(data, keys)


def _with_keys(data: bytes, keys: dict) -> bytes:
    try:
        value = json.loads(data)
    except ValueError:
        value = {}
    return json.dumps({**value, **keys} if isinstance(value, dict) else keys).encode()


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def completed_run(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    with pytest.MonkeyPatch.context() as patch:  # each example's copy is at the same path: load it once
        patch.setattr(
            saved_model_loader, "load_saved_model", functools.cache(saved_model_loader.load_saved_model)
        )
        yield run_dir


def _sweep(completed_run: Path, root: Path) -> Path:
    """A fresh sweep folder under `root` holding two copies of the completed run."""
    sweep = root / "sweep"
    shutil.rmtree(sweep, ignore_errors=True)
    for name in (DAMAGED, INTACT):
        shutil.copytree(completed_run, sweep / name)
    return sweep


def _damage(run_dir: Path, target: str, change) -> list[Path]:
    paths = sorted(run_dir.glob(target))
    for path in paths:
        path.write_bytes(change(path.read_bytes()))
    return paths


def _check(completed_run, tmp_path, capsys, damage) -> None:
    target, kind, change = damage
    sweep = _sweep(completed_run, tmp_path)
    intact = _fingerprint(sweep / INTACT)
    assert _damage(sweep / DAMAGED, target, change), target
    out = tmp_path / "compared"
    compared = main_here(compare.main, capsys, str(sweep), "--out", str(out))
    code, printed, err = compared.returncode, compared.stdout, compared.stderr
    assert code in (0, 2), (target, kind, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("tx-compare: error: "), (target, kind, err)
    else:
        rows = {line.split()[0] for line in printed.splitlines() if line.strip()}
        assert {"0", "1"} <= rows, printed  # both runs listed (by job number), the damaged one as it stands
    translated = main_here(translate.main, capsys, str(sweep / DAMAGED), "jane visits africa")
    code, printed, err = translated.returncode, translated.stdout, translated.stderr
    assert code == 0 and len(printed.splitlines()) == 1 and err == "", (target, kind, err)
    assert _fingerprint(sweep / INTACT) == intact


@DEFAULT
@given(damage=damages())
def test_a_damaged_run_is_listed_or_refused_in_one_line_and_the_others_kept(
    completed_run, tmp_path, capsys, recorded_pools, damage
):
    _check(completed_run, tmp_path, capsys, damage)


def test_found_by_fuzzing_a_summary_whose_config_lacks_the_groups_is_listed(
    completed_run, tmp_path, capsys, recorded_pools
):
    """As Hypothesis found it (fresh-clone CI run, 2026-12-06): a summary.json whose `config` is
    `{"": null}` was a ConfigKeyError traceback from tx-compare's grouped HParams (`Missing key seed`)."""
    damage = (
        "summary.json",
        "its JSON updated with {'config': {'': None}}",
        lambda data: _with_keys(data, {"config": {"": None}}),
    )
    _check(completed_run, tmp_path, capsys, damage)


@pytest.mark.slow
@SLOW
@given(damage=damages())
def test_a_damaged_run_is_listed_or_refused_in_one_line_and_the_others_kept_slow(
    completed_run, tmp_path, capsys, recorded_pools, damage
):
    _check(completed_run, tmp_path, capsys, damage)


class Resumed(BaseException):
    """Raised where a resumed run would start training (what is checked is the resume, not the training);
    a BaseException, so that the run's own handlers do not record it as a failure."""


@pytest.fixture()
def resume(tx_train_here, monkeypatch, capsys, tmp_path):
    """`tx-train resume=RUN_DIR` in this process, stopped where training would begin: (exit code, its
    `tx-train` lines, stderr), the code None for a run that would train."""
    from hydra.core.global_hydra import GlobalHydra

    from tx_keras.training.run import orchestrator

    def stop(*args, **kwargs):
        raise Resumed

    monkeypatch.setattr(orchestrator, "_train_and_evaluate", stop)

    def run(run_dir: Path) -> tuple[int | None, list[str], str]:
        try:
            result = tx_train_here(f"resume={run_dir}", cwd=tmp_path)
            code, out, err = result.returncode, result.stdout, result.stderr
        except Resumed:
            GlobalHydra.instance().clear()  # Hydra's own exit did not run
            printed = capsys.readouterr()
            code, out, err = None, printed.out, printed.err
        finally:
            run_lock.release(run_dir)  # a real tx-train gives its lock back as it exits
        lines = [line for line in (out + err).splitlines() if line.startswith("tx-train")]
        return code, lines, err

    return run


# What a resume may write in a folder it then refuses: Hydra's record of the command, and the lock's holder.
_RESUME_WRITES = (".hydra/", ".lock", "train.log")


def _check_resume(completed_run, tmp_path, resume, damage, interrupted: bool) -> list[str]:
    """`interrupted`: the run has no summary.json (it was stopped before its end), as most resumed runs.
    Returns the command's lines."""
    target, kind, change = damage
    sweep = _sweep(completed_run, tmp_path / "resumed")
    intact = _fingerprint(sweep / INTACT)
    if interrupted:
        (sweep / DAMAGED / "summary.json").unlink()
    if not _damage(sweep / DAMAGED, target, change):
        assert interrupted and target == "summary.json"
        return []
    before = _fingerprint(sweep / DAMAGED)
    code, lines, err = resume(sweep / DAMAGED)
    assert "Traceback" not in err and len(lines) == 1, (target, kind, code, err[-2000:])
    after = _fingerprint(sweep / DAMAGED)
    if code is None:  # resumed: the event files were rolled back to the checkpoint, which is kept as it was
        assert lines[0].startswith(f"tx-train: resuming {sweep / DAMAGED} after epoch"), (target, kind, lines)
        assert after["checkpoints/last.npz"] == before["checkpoints/last.npz"], (target, kind)
    else:
        assert code in (0, 2), (target, kind, code, lines)
        if code == 0:  # the summary still says completed: nothing trained
            assert lines[0].endswith("already completed; skipped (delete its summary.json to rerun)"), lines
        else:
            assert lines[0].startswith("tx-train: error: "), (target, kind, lines)
        kept = {path: digest for path, digest in before.items() if not path.startswith(_RESUME_WRITES)}
        assert {path: after.get(path) for path in kept} == kept, (target, kind, lines)
    assert _fingerprint(sweep / INTACT) == intact
    return lines


def _event(lines: list[str]) -> None:
    """How the resume answered, in Hypothesis's statistics (`--hypothesis-show-statistics`)."""
    answers = ("error", "resuming", "already completed")
    event(
        f"resume: {next((word for word in answers if word in lines[0]), lines[0]) if lines else 'no change'}"
    )


@DEFAULT
@given(damage=damages(), interrupted=st.booleans())
def test_resume_of_a_damaged_run_answers_in_one_line_and_loses_nothing(
    completed_run, tmp_path, resume, recorded_pools, damage, interrupted
):
    _event(_check_resume(completed_run, tmp_path, resume, damage, interrupted))


@pytest.mark.slow
@SLOW
@given(damage=damages(), interrupted=st.booleans())
def test_resume_of_a_damaged_run_answers_in_one_line_and_loses_nothing_slow(
    completed_run, tmp_path, resume, recorded_pools, damage, interrupted
):
    _event(_check_resume(completed_run, tmp_path, resume, damage, interrupted))


def test_found_by_fuzzing_an_interrupted_run_whose_marker_lost_its_config_is_one_line(
    completed_run, tmp_path, resume, recorded_pools
):
    """As Hypothesis shrank it: a run with no summary.json whose run.json says `"config": null` was an
    AttributeError traceback from comparing the saved config with the command's."""
    damage = (
        "run.json",
        "its JSON updated with {'config': None}",
        lambda data: _with_keys(data, {"config": None}),
    )
    [line] = _check_resume(completed_run, tmp_path, resume, damage, interrupted=True)
    assert line.startswith("tx-train: error: ") and line.endswith(
        "run.json holds no config (its `config` is null); this folder cannot be resumed, use a new run folder"
    ), line


@ahead_fixture
def fresh_damaged_resume(folder: Path) -> tuple[dict, dict, subprocess.CompletedProcess]:
    """A real `tx-train resume=` process on an interrupted copy of the tiny run whose checkpoint was cut in
    half: the folder's fingerprint before and after, and the process."""
    sweep = _sweep(needs("tiny_run")[1], folder)
    (sweep / DAMAGED / "summary.json").unlink()
    _damage(sweep / DAMAGED, "checkpoints/last.npz", lambda data: data[: len(data) // 2])
    before = _fingerprint(sweep / DAMAGED)
    result = tx_train(f"resume={sweep / DAMAGED}", cwd=folder)
    return before, _fingerprint(sweep / DAMAGED), result


def test_a_fresh_tx_train_refuses_a_damaged_resume_in_one_line(fresh_damaged_resume):
    """As a user runs it (the refusal that comes last, after TensorFlow has started): one line, exit 2, no
    traceback, and the folder's files kept."""
    before, after, result = fresh_damaged_resume
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr and result.returncode == 2, result.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("tx-train: error: ") and "last.npz" in lines[0], lines
    assert {path: after.get(path) for path in before if not path.startswith(_RESUME_WRITES)} == {
        path: digest for path, digest in before.items() if not path.startswith(_RESUME_WRITES)
    }


@pytest.mark.parametrize(
    ("target", "content"),
    [
        ("run.json", b'{"format": "one"'),
        ("run.json", b"[]"),
        ("checkpoints/last.npz", b"PK\x03\x04"),  # the summary says completed: nothing to resume
        ("summary.json+checkpoints/last.npz", b"PK\x03\x04"),  # no summary: the checkpoint is read
        (".hydra/overrides.yaml", b"- [unclosed"),
    ],
)
def test_resume_of_a_damaged_run_answers_in_one_line(completed_run, tmp_path, tx_train_here, target, content):
    """`tx-train resume=` on a sample of damaged folders: one line (exit 2, or 0 for a run whose summary
    says it is done) before anything trains; never a traceback, never another run's files."""
    sweep = _sweep(completed_run, tmp_path)
    intact = _fingerprint(sweep / INTACT)
    *removed, damaged = target.split("+")
    for name in removed:
        (sweep / DAMAGED / name).unlink()
    (sweep / DAMAGED / damaged).write_bytes(content)
    result = tx_train_here(f"resume={sweep / DAMAGED}", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("tx-train")]
    assert result.returncode in (0, 2) and len(lines) == 1, result.stderr[-2000:]
    if result.returncode == 0:  # a completed run's summary still says so: nothing to train, nothing trained
        assert lines[0].endswith("already completed; skipped (delete its summary.json to rerun)"), lines
    else:
        assert not (sweep / DAMAGED / "summary.json").exists() or "summary.json" not in removed
    assert _fingerprint(sweep / INTACT) == intact


@pytest.mark.parametrize(
    "content",
    [
        {"status": "completed", "epochs": "2"},  # a string where tx-train writes a count
        {"status": "completed", "metrics": {"validation_loss": "low"}},
        {"status": ["completed"], "metrics": []},
        {"status": "completed", "epochs": 2, "parameters": True},
    ],
)
def test_found_by_fuzzing_a_summary_of_the_wrong_shape_is_no_summary(tmp_path, content):
    """What the property found, as Hypothesis shrank it: valid JSON of another shape in summary.json was a
    TypeError in tx-compare's table (float() of a metric) and in resume's "already done?" arithmetic."""
    (tmp_path / "summary.json").write_text(json.dumps(content))
    assert summary_or_none(tmp_path) is None and completed_summary(tmp_path, epochs=2) is None
    assert read_run(tmp_path).status == "unfinished"
