"""data=parallel_text end to end on a small TSV the test writes: bad lines counted, split by source,
a tiny run with BLEU/chrF in summary.json, and an export that serves text with tensorflow-text."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.ahead import ahead_fixture, needs
from tests.conftest import tx_train
from tx_keras.data import build_task
from tx_keras.evaluation import corpus_scores

SUBJECTS = [("I", "Je", "suis"), ("You", "Tu", "es"), ("He", "Il", "est"), ("She", "Elle", "est")]
STATES = [
    ("tired", "fatigué"),
    ("happy", "heureux"),
    ("here", "là"),
    ("late", "en retard"),
    ("ready", "prêt"),
]
PLACES = [("in Paris", "à Paris"), ("at home", "à la maison"), ("in Africa", "en Afrique"), ("", "")]


def _pairs() -> list[tuple[str, str]]:
    pairs = []
    for english, french, verb in SUBJECTS:
        be = {"I": "am", "You": "are"}.get(english, "is")
        for state, etat in STATES:
            for place, lieu in PLACES:
                end = f" {place}" if place else ""
                fin = f" {lieu}" if lieu else ""
                pairs.append((f"{english} {be} {state}{end}.", f"{french} {verb} {etat}{fin}."))
                pairs.append((f"{english} {be} {state}{end}!", f"{french} {verb} {etat}{fin}\u202f!"))
    # A second translation of some sources: the split must keep them together.
    pairs += [("I am here.", "Me voici."), ("She is late.", "Elle a du retard.")]
    return pairs


BAD_LINES = [
    b"no tab on this line",
    b"\tempty source",
    b"empty target\t",
    b"bad \xff bytes\tmauvais",
    b"bad\x00line\tmit\x00null",  # issue 65: NUL bytes, once a C++ traceback
]


def _write_corpus(folder: Path) -> Path:
    path = folder / "eng-fra.txt"
    lines = [f"{en}\t{fr}\tCC-BY 2.0 (France) Attribution: tatoeba.org".encode() for en, fr in _pairs()]
    lines[10:10] = BAD_LINES
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return _write_corpus(tmp_path_factory.mktemp("corpus"))


def _config(corpus: Path, **overrides) -> dict:
    return {
        "name": "parallel_text",
        "path": str(corpus),
        "seed": 0,
        "num_validation": 12,
        "num_test": 20,
        "vocab_size": 200,
        "max_words": 40,
        "tokenizer": "wordpiece",
        "cache_dir": str(corpus.parent / "cache"),
        **overrides,
    }


def test_the_split_never_shares_a_source_and_is_reproducible(corpus):
    task = build_task(_config(corpus))
    sources = {
        split: {source for source, _ in task.texts(split)} for split in ("train", "validation", "test")
    }
    assert not sources["train"] & sources["test"] and not sources["train"] & sources["validation"]
    assert not sources["validation"] & sources["test"]
    assert len(task.texts("test")) == 20 and len(task.texts("validation")) == 12
    again = build_task(_config(corpus))
    for split, (source, target) in task.splits.items():
        assert (again.splits[split][0] == source).all() and (again.splits[split][1] == target).all()
    other = build_task(_config(corpus, seed=1))
    assert other.texts("test") != task.texts("test")
    assert task.report["lines"] == {
        "lines": len(_pairs()) + 5, "kept": len(_pairs()), "blank": 0, "malformed": 1,
        "invalid_utf8": 1, "control": 1, "empty": 2, "overlong": 0,
    }  # fmt: skip


def test_references_keep_the_normalised_text_and_targets_detokenize_to_it(corpus):
    task = build_task(_config(corpus, vocab_size=400))
    source, target = task.splits["train"]
    texts = task.texts("train")
    assert any(reference.endswith(" !") for _, reference in texts)  # U+202F became a plain space
    assert [task.detokenize_target(row) for row in target] == [reference for _, reference in texts]
    assert [task.detokenize_source(row) for row in source] == [text for text, _ in texts]


def test_characters_and_a_shared_vocabulary(corpus):
    task = build_task(_config(corpus, tokenizer="characters", shared_vocabulary=True, vocab_size=60))
    assert task.source_vocab is task.target_vocab and len(task.source_vocab) <= 60
    _, target = task.splits["validation"]
    assert [task.detokenize_target(row) for row in target] == [t for _, t in task.texts("validation")]


@ahead_fixture
def text_run(root: Path):
    """A tiny run on the corpus above (its own copy); started ahead (tests/ahead.py)."""
    run_dir = root / "run"
    result = tx_train(
        "data=parallel_text",
        f"data.path={_write_corpus(root)}",
        f"data.cache_dir={root / 'cache'}",
        "data.num_validation=12",
        "data.num_test=20",
        "data.vocab_size=200",
        "model=tiny",
        "model.tie_embeddings=true",  # the export must serve a tied model too (the option, not the preset)
        "trainer.epochs=2",
        "trainer.batching=bucket",
        "trainer.batch_tokens=256",
        "logging.verbose=0",
        "export.beam_width=2",
        "export.length_penalty=auto",  # as the tatoeba_small preset: chosen on validation
        f"hydra.run.dir={run_dir}",
        cwd=root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (root / "stderr.txt").write_text(result.stderr)
    return run_dir, json.loads((run_dir / "summary.json").read_text())


def test_a_corpus_with_a_nul_line_trains_and_reports_the_line_skipped(text_run):
    """The corpus holds `bad\\x00line<TAB>mit\\x00null` (issue 65): the run trains, says in its log that the
    line was skipped for its control characters, and no traceback reaches the user."""
    run_dir, summary = text_run
    stderr = (run_dir.parent / "stderr.txt").read_text()
    assert "Traceback" not in stderr
    assert summary["status"] == "completed" and summary["data"]["lines"]["control"] == 1
    report = f"{len(_pairs()) + 5} lines, {len(_pairs())} pairs kept; skipped: 1 malformed, 1 invalid UTF-8, "
    assert report + "1 with control characters, 2 empty, 0 overlong" in (run_dir / "train.log").read_text()


def test_a_bucketed_run_logs_no_ran_out_of_data_warning(text_run):
    """Keras warns "Your input ran out of data" at the end of a dataset of unknown length; with bucketed
    batches that is every epoch's and every evaluation's normal end, so the run must not print it (it did
    in the end-of-run evaluation until 2026-12-02)."""
    run_dir, _ = text_run
    log = (run_dir / "train.log").read_text()
    assert "evaluation: decoding the validation and test splits: done" in log
    assert "ran out of data" not in log


def test_a_tiny_run_writes_bleu_and_chrf(text_run):
    run_dir, summary = text_run
    assert summary["status"] == "completed" and summary["config"]["model"]["tie_embeddings"] is True
    metrics = summary["metrics"]
    # Every figure the README reads, beam on validation too (length_penalty=auto); their values are
    # checked against the translations and the grid in the tests below.
    expected = {f"{split}_{score}" for split in ("validation", "test") for score in ("bleu", "chrf")}
    expected |= {f"{name}_beam" for name in expected} | {"train_loss", "validation_loss", "test_exact_match"}
    assert expected <= set(metrics) and all(np.isfinite(metrics[name]) for name in expected)
    data = summary["data"]
    assert data["pairs"]["test"] == 20 and data["lines"]["malformed"] == 1
    assert 0.0 <= data["padding_fraction"] < 0.5
    assert (run_dir / "text_format.json").is_file()


def test_the_length_penalty_is_chosen_on_validation_and_exported(text_run):
    """length_penalty=auto: every alpha of the grid scored on validation, the best one kept, the test
    split decoded with it once, and the SavedModel serving that alpha."""
    run_dir, summary = text_run
    choice = summary["length_penalty"]
    grid = {row["alpha"]: row["validation_chrf"] for row in choice["grid"]}
    assert list(grid) == [0.6, 1.0, 1.4]
    assert choice["chosen"] == max(grid, key=lambda alpha: (grid[alpha], -alpha))
    assert summary["metrics"]["validation_chrf_beam"] == pytest.approx(grid[choice["chosen"]], abs=1e-4)
    assert choice["chosen_by"] == "validation chrF, beam width 2"
    manifest = json.loads((run_dir / "export/export.json").read_text())
    assert manifest["length_penalty"] == choice["chosen"] and manifest["beam_width"] == 2
    assert 0.0 < summary["evaluation_minutes"] < summary["wall_time_s"] / 60


def test_the_test_translations_are_written_beside_the_scores(text_run):
    """The TSV holds the very hypotheses the summary scored: rescoring it gives the same BLEU and chrF."""
    run_dir, summary = text_run
    for decoder, suffix in (("greedy", ""), ("beam", "_beam")):
        lines = (run_dir / "translations" / f"test_{decoder}.tsv").read_text(encoding="utf-8").splitlines()
        assert lines[0] == "source\treference\thypothesis" and len(lines) == 1 + 20
        rows = [line.split("\t") for line in lines[1:]]
        assert all(len(row) == 3 for row in rows)
        scores = corpus_scores([row[2] for row in rows], [row[1] for row in rows])
        assert scores["bleu"] == pytest.approx(summary["metrics"][f"test_bleu{suffix}"])
        assert scores["chrf"] == pytest.approx(summary["metrics"][f"test_chrf{suffix}"])


CLIENT = """
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the tokenizer ops
model = tf.saved_model.load(sys.argv[1])
odd = ["I am tired.", "She is happy in Paris!", "", "\\u00e9\\u202f?"]
texts = tf.constant([*odd, *json.loads(sys.argv[2])])
out = model.signatures["translate"](texts=texts)["translation"]
tokens = model.signatures["translate_with_attention"](texts=texts[:1])["source_tokens"]
print(json.dumps({"translations": [t.decode() for t in out.numpy()],
                  "source_tokens": [t.decode() for t in tokens.numpy()[0]]}))
"""


def _decoded_reference(run_dir: Path, summary: dict) -> tuple[list[str], list[str]]:
    """The test split's sources and what the exported Keras model's beam search (the export's width and
    length penalty) makes of their token ids, detokenized as the run's own figures were."""
    import keras
    import tensorflow as tf

    from tx_keras.decoding.beam_search import beam_search_decoder

    manifest = json.loads((run_dir / "export/export.json").read_text())
    task = build_task(summary["config"]["data"])
    model = keras.saving.load_model(run_dir / "export/model.keras", safe_mode=True)
    width, alpha = manifest["beam_width"], manifest["length_penalty"]
    decode = beam_search_decoder(model, model.max_target_length, width, alpha)
    rows = decode(tf.constant(task.splits["test"][0]))
    return [source for source, _ in task.texts("test")], [task.detokenize_target(row) for row in rows.numpy()]


@ahead_fixture
def text_client_reply(folder: Path) -> tuple[list[str], subprocess.CompletedProcess]:
    """The CLIENT's answer on the text run's SavedModel for the test split's sources (read from the run's
    own translations file) after four odd inputs."""
    run_dir, summary = needs("text_run")
    lines = (run_dir / "translations/test_beam.tsv").read_text(encoding="utf-8").splitlines()[1:]
    sources = [line.split("\t")[0] for line in lines]
    result = subprocess.run(
        [sys.executable, "-c", CLIENT, str(run_dir / summary["export"]), json.dumps(sources)],
        capture_output=True, text=True, timeout=300, cwd=folder,
    )  # fmt: skip
    return sources, result


def test_the_export_serves_text_in_a_fresh_process(text_run, text_client_reply):
    """The SavedModel, loaded by a client that imports tensorflow and tensorflow-text only, translates the
    test split as the run's own decoder does (a decoded reference, not just strings), and gives a string
    for empty and odd input too."""
    run_dir, summary = text_run
    manifest = json.loads((run_dir / "export/export.json").read_text())
    assert manifest["requires_tensorflow_text"] is True
    sources, expected = _decoded_reference(run_dir, summary)
    asked, result = text_client_reply
    assert asked == sources
    assert result.returncode == 0, result.stderr[-2000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    odd, served = answer["translations"][:4], answer["translations"][4:]
    assert len(odd) == 4 and all(isinstance(t, str) for t in odd)
    assert served == expected
    assert answer["source_tokens"][-1] == "<eos>" or "<eos>" in answer["source_tokens"]


@ahead_fixture
def text_translated(folder: Path) -> subprocess.CompletedProcess:
    """`tx-translate RUN "I am tired."` on the text run."""
    script = str(Path(sys.executable).parent / "tx-translate")
    run_dir = needs("text_run")[0]
    return subprocess.run(
        [script, str(run_dir), "I am tired."], capture_output=True, text=True, timeout=300, cwd=folder
    )


def test_tx_translate_reads_a_text_run(text_run, text_translated):
    """tx-translate prints what the run's SavedModel itself makes of the sentence."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - registers the SavedModel's tokenizer ops

    run_dir, summary = text_run
    assert text_translated.returncode == 0, text_translated.stderr[-2000:]
    model = tf.saved_model.load(str(run_dir / summary["export"]))
    (own,) = model.signatures["translate"](texts=tf.constant(["I am tired."]))["translation"].numpy()
    assert text_translated.stdout.splitlines() == [own.decode()]


@ahead_fixture
def text_saved_model_cli(folder: Path) -> subprocess.CompletedProcess:
    """TensorFlow's own saved_model_cli `show --all` on the text run's export, in a process that has loaded
    tensorflow-text's ops."""
    run_dir, summary = needs("text_run")
    cli = "import tensorflow_text\nfrom tensorflow.python.tools import saved_model_cli as c\nc.main()"
    return subprocess.run(
        [sys.executable, "-c", cli, "show", "--dir", str(run_dir / summary["export"]), "--all"],
        capture_output=True, text=True, timeout=300, cwd=folder,
    )  # fmt: skip


def test_saved_model_cli_shows_the_signatures(text_saved_model_cli):
    shown = text_saved_model_cli
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "signature_def['translate']" in shown.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param("missing.tsv", None, "no such file", id="missing"),
        pytest.param("empty.tsv", "", "is empty", id="empty"),
        pytest.param("junk.tsv", "no tabs\nat all\n", "no valid sentence pairs", id="junk"),
    ],
)
def test_missing_and_empty_corpus_files_fail_in_one_line(tmp_path, name, content, message):
    """In a real tx-train process (~9 s each: TensorFlow starts before the data stage), so slow tests: the
    default test_bad_input::test_tx_train_bad_input checks the same one line, exit code 2 and no traceback
    for the three files through tx-train's main in-process (and test_data_path_is_required, below, a refusal
    in a real process)."""
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = tx_train("data=parallel_text", f"data.path={path}", "model=tiny", cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-1500:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("tx-train: error:")]
    assert len(lines) == 1 and message in lines[0], result.stderr[-1500:]
    assert "Traceback" not in result.stderr


def test_data_path_is_required(tmp_path):
    result = tx_train("data=parallel_text", "model=tiny", cwd=tmp_path)
    assert result.returncode == 2
    assert "tx-train: error: data.path is required" in result.stderr
    assert not np.any(["Traceback" in line for line in result.stderr.splitlines()])


def test_the_tatoeba_preset_composes_and_passes_the_config_check():
    from hydra import compose, initialize_config_module

    from tx_keras.training.run.config_check import check_config

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=tatoeba_small", "data.path=pairs.tsv"])
    check_config(cfg)
    assert cfg.data.name == "parallel_text" and cfg.trainer.batching == "bucket"
    assert cfg.trainer.max_train_minutes < 30 and cfg.model.d_model == 256


def test_bucketed_data_parallel_evaluates_on_the_batches_validation_read(data_parallel_run):
    """Two TensorFlow replicas, bucketed batches of real text: the end-of-run teacher-forced evaluation reads
    the batches fit's validation read (padded to rows the replicas split evenly; a 1-row batch once failed
    there with an AddN shape error), so summary.json's validation_loss is the epoch's logged val loss. The
    run (tests/conftest.py: this module's corpus, 96 tokens a batch) serves test_distribution.py too."""
    import tensorflow as tf

    result, run_dir = data_parallel_run
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    logged = [
        float(tf.make_ndarray(value.tensor))
        for path in (run_dir / "validation").glob("events.out.tfevents.*")
        for event in tf.compat.v1.train.summary_iterator(str(path))
        for value in event.summary.value
        if value.tag == "epoch_loss"
    ]
    assert len(logged) == 1
    np.testing.assert_allclose(summary["metrics"]["validation_loss"], logged[0], rtol=1e-5)
    assert np.isfinite(summary["metrics"]["test_loss"])
