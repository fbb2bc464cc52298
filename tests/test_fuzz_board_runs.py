"""Property-based tests of tx-board's Attention tab over damaged run folders (issue 65), with Hypothesis: one
run of a two-run logdir has a file the tab reads (summary.json, run.json, the checkpoint, event files, the
SavedModel, model.keras, the vocabularies) cut, emptied, or replaced with garbage or JSON of the wrong shape.
Every route of the tab, called in this process as TensorBoard serves it (tests/test_explorer_routes.py
`_board`), answers: never a 500 or an exception, never a traceback in the body; the damaged run is served,
skipped, or refused with a 4xx and a one-line message; the other run's answers are what they are with no
run damaged; and no file of either run is deleted or rewritten. A second, fast property gives summary.json's
`export` entry (where the tab looks for the SavedModel) any value.

The tiny run (tests/conftest.py `tiny_run`) is copied twice per example. Loading a SavedModel or a Keras
model is memoised by the bytes of its files, so each example loads only what it damaged. The default run
keeps four examples (each explains sentences with two models); `pytest -m slow` runs ten times as many.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.test_explorer_routes import PREFIX, _board
from tests.test_fuzz_run_folders import _JSON, DAMAGED, INTACT, _damage, _fingerprint, _sweep, damages
from tx_keras.explorer import run_models, sentence_explanation, translators
from tx_keras.explorer.run_folders import saved_model
from tx_keras.run_folder.attention_format import KINDS

settings.register_profile("board-runs-default", settings.get_profile("run-folders-default"), max_examples=4)
settings.register_profile("board-runs-slow", settings.get_profile("board-runs-default"), max_examples=40)
DEFAULT, SLOW = settings.get_profile("board-runs-default"), settings.get_profile("board-runs-slow")

# Every file of a completed run that the tab (or the TensorBoard under it) reads.
TARGETS = [
    "summary.json",
    "run.json",
    "checkpoints/last.npz",
    "*/events.out.tfevents*",
    "events.out.tfevents*",
    "model.keras",
    "export/model.keras",
    "export/export.json",
    "export/saved_model/saved_model.pb",
    "export/saved_model/fingerprint.pb",
    "export/saved_model/variables/variables.*",
    "export/saved_model/assets/*",
    "source_vocab.txt",
    "target_vocab.txt",
]
# summary.json's keys the tab reads (where the export is, the head importance) and a few others.
SUMMARY_KEYS = ["export", "head_importance", "status", "config", "metrics"]
SENTENCE = "jane visits africa"


def _digest(folder: Path, paths: list[Path]) -> tuple:
    """What a load reads: each file's place in `folder` and its bytes' hash."""
    return tuple(
        (path.relative_to(folder).as_posix(), hashlib.sha256(path.read_bytes()).hexdigest())
        for path in sorted(paths)
        if path.is_file()
    )


@pytest.fixture(scope="module")
def completed_run(tiny_run):
    """The tiny run, with the tab's loads and explanations memoised by the bytes they read: the intact
    copies load once for the module, a damaged file is loaded anew."""
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    load_saved_model, load_model, explain = (
        translators.load_saved_model,
        run_models._load,
        sentence_explanation.explain,
    )
    loaded: dict = {}

    def memo(key: tuple, load):
        if key not in loaded:
            loaded[key] = load()
        return loaded[key]

    def saved_model(path: Path):
        return memo(_digest(path, list(path.rglob("*"))), lambda: load_saved_model(path))

    def model(folder: Path, path: Path):
        read = [path, *folder.glob("*vocab.txt"), folder / "summary.json"]
        return memo(_digest(folder, read), lambda: load_model(folder, path))

    def explanation(entry, *args, **kwargs) -> dict:  # a function of the loaded model and its inputs
        return memo((id(entry), repr((args, kwargs))), lambda: explain(entry, *args, **kwargs))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(translators, "load_saved_model", saved_model)
        patch.setattr(run_models, "_load", model)
        patch.setattr(sentence_explanation, "explain", explanation)
        yield run_dir


def _requests(runs: list[str]) -> list[tuple[str, str, dict]]:
    """(method, route, query or body) of every route of the tab, for each of `runs`."""
    asked: list[tuple[str, str, dict]] = [("GET", "runs", {})]
    for run in runs:
        for probe in (0, 1):
            for kind in KINDS:
                asked += [
                    ("GET", route, {"run": run, "probe": probe, "kind": kind})
                    for route in ("attention", "rollout")
                ]
        asked += [
            ("POST", "translate", {"run": run, "text": SENTENCE}),
            ("POST", "explain", {"run": run, "probe": 0, "steps": 4}),
            ("POST", "explain", {"run": run, "text": SENTENCE, "steps": 4}),
        ]
    return asked


def _answers(client, runs: list[str]) -> dict[tuple, tuple[int, dict]]:
    """(request) -> (status, JSON body) of every request, each checked: JSON, no 5xx, no traceback, and a
    refusal is one line."""
    answers = {}
    for method, route, given_ in _requests(runs):
        if method == "GET":
            response = client.get(f"{PREFIX}/{route}", query_string=given_)
        else:
            response = client.post(
                f"{PREFIX}/{route}", data=json.dumps(given_), content_type="application/json"
            )
        text = response.get_data(as_text=True)
        asked = (route, json.dumps(given_, sort_keys=True))
        assert response.status_code < 500 and "Traceback" not in text, (
            asked,
            response.status_code,
            text[-2000:],
        )
        assert response.headers["Content-Type"].startswith("application/json"), asked
        body = json.loads(text)
        if response.status_code >= 400:
            assert list(body) == ["error"] and "\n" not in body["error"] and body["error"], (asked, body)
        answers[asked] = response.status_code, body
    return answers


def _of(answers: dict, run: str) -> dict:
    """The answers about `run`: its own requests, and its entries in the run list."""
    mine = {asked: answer for asked, answer in answers.items() if f'"run": "{run}"' in asked[1]}
    status, listing = answers[("runs", "{}")]
    mine["runs"] = (
        status,
        [entry for entry in listing["runs"] if entry["run"] == run],
        run in listing["translatable"],
        listing["labels"].get(run),
    )
    return mine


@pytest.fixture(scope="module")
def undamaged(completed_run, tmp_path_factory):
    """The intact run's answers beside an undamaged copy of itself."""
    sweep = _sweep(completed_run, tmp_path_factory.mktemp("undamaged"))
    client, _, _ = _board(sweep)
    answers = _of(_answers(client, [DAMAGED, INTACT]), INTACT)
    assert all(status == 200 for status, *_ in answers.values()), answers
    return Answers(answers)


class Answers(dict):
    """A run's answers, shown short where Hypothesis prints a failing example's arguments."""

    def __repr__(self) -> str:
        return f"<{len(self)} answers about {INTACT}>"


def _check(completed_run, undamaged, tmp_path, damage) -> dict:
    """The checks of one example; returns the damaged run's answers."""
    target, kind, change = damage
    sweep = _sweep(completed_run, tmp_path)
    intact = _fingerprint(sweep / INTACT)
    assert _damage(sweep / DAMAGED, target, change), target
    damaged = _fingerprint(sweep / DAMAGED)
    client, _, _ = _board(sweep)
    answers = _answers(client, [DAMAGED, INTACT])
    assert _of(answers, INTACT) == undamaged, (target, kind)
    assert _fingerprint(sweep / INTACT) == intact and _fingerprint(sweep / DAMAGED) == damaged, (target, kind)
    return _of(answers, DAMAGED)


def _events(answers: dict) -> None:
    """What the damaged run was answered, in Hypothesis's statistics (`--hypothesis-show-statistics`)."""
    for asked, answer in answers.items():
        if asked == "runs":
            event(f"the damaged run {'listed' if answer[1] else 'skipped'}")
        else:
            event(f"{asked[0]} of the damaged run: {answer[0]}")


@DEFAULT
@given(damage=damages(TARGETS, SUMMARY_KEYS))
def test_a_damaged_run_is_served_skipped_or_refused_in_one_line_and_the_other_served_as_before(
    completed_run, undamaged, tmp_path, damage
):
    _events(_check(completed_run, undamaged, tmp_path, damage))


@pytest.mark.slow
@SLOW
@given(damage=damages(TARGETS, SUMMARY_KEYS))
def test_a_damaged_run_is_served_skipped_or_refused_in_one_line_and_the_other_served_as_before_slow(
    completed_run, undamaged, tmp_path, damage
):
    _events(_check(completed_run, undamaged, tmp_path, damage))


# What the property found, as Hypothesis shrank it (issue 65's closing note lists them): each was a 500
# ("this run's model could not explain: ValueError / IndexError") with the traceback in the server's log.
@pytest.mark.parametrize(
    ("target", "kind", "change", "line"),
    [
        (
            "export/model.keras",
            "emptied",
            lambda data: b"",
            "this run's export/model.keras cannot be read (ValueError); write it again with tx-export",
        ),
        (  # the model's output ids past the cut had no token: an IndexError in the confidence view
            "target_vocab.txt",
            "cut to 0.500 of its bytes",
            lambda data: data[: len(data) // 2],
            "this run's target_vocab.txt holds ",
        ),
    ],
    ids=["model.keras emptied", "target vocabulary cut"],
)
def test_found_by_fuzzing_a_damaged_model_file_is_a_409_in_one_line(
    completed_run, undamaged, tmp_path, target, kind, change, line
):
    _check(completed_run, undamaged, tmp_path, (target, kind, change))
    client, _, _ = _board(tmp_path / "sweep")
    for body in ({"run": DAMAGED, "probe": 0}, {"run": DAMAGED, "text": SENTENCE}):
        response = client.post(f"{PREFIX}/explain", data=json.dumps(body), content_type="application/json")
        assert response.status_code == 409 and response.json["error"].startswith(line), response.json


# summary.json's `export` entry: any JSON, or path-like text with the characters a path may trip on.
EXPORTS = _JSON | st.text(st.sampled_from("./\x00ab~") | st.characters(), max_size=12)


def _check_export(root: Path, exported: object) -> None:
    run = Path(tempfile.mkdtemp(dir=root))
    (run / "export" / "saved_model").mkdir(parents=True)
    (run / "export" / "saved_model" / "saved_model.pb").write_bytes(b"")
    (run / "summary.json").write_text(json.dumps({"export": exported}))
    found = saved_model(run)
    assert found is None or run.resolve() in found.resolve().parents, (exported, found)


@settings(DEFAULT, max_examples=200)
@given(exported=EXPORTS)
def test_any_export_entry_in_summary_json_gives_a_saved_model_inside_the_run_or_none(tmp_path, exported):
    """summary.json's `export` (where the tab looks for the run's SavedModel) holding any value: the tab
    finds the default export or none, never one outside the run, and never raises."""
    _check_export(tmp_path, exported)


@pytest.mark.slow
@settings(DEFAULT, max_examples=2000)
@given(exported=EXPORTS)
def test_any_export_entry_in_summary_json_gives_a_saved_model_inside_the_run_or_none_slow(tmp_path, exported):
    _check_export(tmp_path, exported)


def test_found_by_fuzzing_a_nul_in_summary_jsons_export_entry_finds_the_default_export(tmp_path):
    """As Hypothesis shrank it: `{"export": "\\u0000"}` in summary.json was a ValueError (embedded null byte)
    from resolving the path, raised through the run list (`/runs`) for every run of the logdir."""
    (tmp_path / "export" / "saved_model").mkdir(parents=True)
    (tmp_path / "export" / "saved_model" / "saved_model.pb").write_bytes(b"")
    (tmp_path / "summary.json").write_text(json.dumps({"export": "\x00"}))
    assert saved_model(tmp_path) == tmp_path / "export" / "saved_model"
