"""The exported SavedModel: loads without tx_keras, translates as in-process, never fails on text."""

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.ahead import ahead_fixture, needs
from tests.float_tolerance import FLOAT32
from tx_keras.data import build_task
from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.export import WordCodec
from tx_keras.models import Transformer
from tx_keras.runtime.cpu_share import usable_cores
from tx_keras.runtime.pool_plan import POOL_VARIABLES

SIGNATURES = ["logits", "serving_default", "tokenize", "translate", "translate_with_attention"]

# What a client does: import tensorflow only, load, call the signatures. Reads texts and ids as JSON on stdin.
CLIENT = """
import json, sys
import tensorflow as tf
request = json.load(sys.stdin)
model = tf.saved_model.load(request["saved_model"])
translations = model.signatures["translate"](texts=tf.constant(request["texts"]))["translation"]
logits = model.signatures["logits"](
    source_ids=tf.constant(request["source_ids"], tf.int32),
    decoder_input_ids=tf.constant(request["decoder_input_ids"], tf.int32),
)["logits"]
json.dump({"translations": [t.decode() for t in translations.numpy()], "logits": logits.numpy().tolist(),
           "imported_tx_keras": any(name.startswith("tx_keras") for name in sys.modules)}, sys.stdout)
"""


def _cli(*args, cwd, stdin=None):
    return subprocess.run([*args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)


def _script(name: str) -> str:
    return str(Path(sys.executable).parent / name)


@pytest.fixture(scope="module")
def exported(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    return run_dir, summary


def test_a_completed_run_is_exported(exported):
    run_dir, summary = exported
    assert summary["export"] == "export/saved_model"
    for name in ("model.keras", "source_vocab.txt", "target_vocab.txt", "export/model.keras"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "export/saved_model/saved_model.pb").is_file()
    # the source words are a lookup table's asset; the target words, constants of the detokenizer
    assert sorted(p.name for p in (run_dir / "export/saved_model/assets").iterdir()) == ["source_vocab.txt"]
    manifest = json.loads((run_dir / "export/export.json").read_text())
    assert manifest["signatures"] == SIGNATURES
    assert manifest["beam_width"] == 4 and manifest["requires_tensorflow_text"] is False
    # the loops its decoders were traced with: one per inter-op thread of tx-train's process, at most 2
    inter_op = int(os.environ.get("TF_NUM_INTEROP_THREADS") or usable_cores())
    assert manifest["decoding_loops"] == max(1, min(inter_op, 2))
    assert not list(run_dir.glob(".export*")), "the temporary build folder must be gone"


@ahead_fixture
def client_reply(folder: Path) -> tuple[dict, subprocess.CompletedProcess]:
    """The CLIENT's answer on the tiny run's SavedModel: 16 validation sentences, 4 pairs of ids."""
    _, run_dir = needs("tiny_run")
    task = build_task(json.loads((run_dir / "summary.json").read_text())["config"]["data"])
    source, target = task.splits["validation"]
    request = {
        "saved_model": str(run_dir / "export/saved_model"),
        "texts": [text for text, _ in task.texts("validation")[:16]],
        "source_ids": source[:4].tolist(),
        "decoder_input_ids": target[:4, :-1].tolist(),
    }
    return request, _cli(sys.executable, "-c", CLIENT, cwd=folder, stdin=json.dumps(request))


def test_fresh_process_without_tx_keras_translates_like_the_in_process_model(exported, client_reply):
    run_dir, summary = exported
    request, result = client_reply
    task = build_task(summary["config"]["data"])
    source, target = task.splits["validation"]
    source, target = source[:16], target[:16]
    assert request["texts"] == [text for text, _ in task.texts("validation")[:16]]
    assert request["source_ids"] == source[:4].tolist()
    # Keras finds a saved class only once its module is imported (it imports none itself in safe mode).
    model = keras.saving.load_model(run_dir / "export/model.keras", safe_mode=True)
    assert isinstance(model, Transformer)
    export = summary["config"]["export"]
    decode = beam_search_decoder(
        model, model.max_target_length, export["beam_width"], export["length_penalty"]
    )
    expected = [task.detokenize_target(row) for row in decode(tf.constant(source)).numpy()]
    assert result.returncode == 0, result.stderr[-2000:]
    reply = json.loads(result.stdout)
    assert reply["imported_tx_keras"] is False
    assert reply["translations"] == expected
    np.testing.assert_allclose(
        np.array(reply["logits"]), model((source[:4], target[:4, :-1])).numpy(), **FLOAT32
    )


@ahead_fixture
def saved_model_cli_runs(folder: Path) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """TensorFlow's saved_model_cli on the tiny run's export: `show --all`, then `run` on `translate`."""
    saved_model = str(needs("tiny_run")[1] / "export/saved_model")
    shown = _cli(_script("saved_model_cli"), "show", "--dir", saved_model, "--all", cwd=folder)
    ran = _cli(
        _script("saved_model_cli"),
        "run",
        "--dir",
        saved_model,
        "--tag_set",
        "serve",
        "--signature_def",
        "translate",
        "--input_exprs",
        'texts=["jane visits africa in september"]',
        cwd=folder,
    )
    return shown, ran


def test_saved_model_cli_shows_and_runs_the_signatures(saved_model_cli_runs):
    shown, ran = saved_model_cli_runs
    assert shown.returncode == 0, shown.stderr[-2000:]
    for name in SIGNATURES:
        assert f"signature_def['{name}']" in shown.stdout
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "Result for output key translation:" in ran.stdout
    assert "[b'" in ran.stdout or '[b"' in ran.stdout


def test_bad_input_always_gives_a_string(exported):
    run_dir, summary = exported
    model = tf.saved_model.load(str(run_dir / "export/saved_model"))
    length = json.loads((run_dir / "export/export.json").read_text())["max_source_length"]
    texts = tf.constant(
        ["", "   ", "jane " * 500, "été 東京 Ünïcode", "qwerty zxcv", b"\xff\xfe broken utf-8", "<eos> <pad>"]
    )
    translations = model.signatures["translate"](texts=texts)["translation"].numpy()
    assert translations.shape == (7,) and all(isinstance(t, bytes) for t in translations)
    with_attention = model.signatures["translate_with_attention"](texts=texts)
    assert with_attention["translation"].shape == (7,)
    assert with_attention["cross_attention"].shape[:2] == (7, 1)
    ids = model.signatures["tokenize"](texts=texts)["source_ids"].numpy()
    assert ids.shape == (7, length)
    assert list(ids[0, :2]) == [2, 0]  # empty: EOS alone
    assert ids[2, length - 1] == 2 and np.all(ids[2, : length - 1] > 3)  # truncated, then EOS
    assert list(ids[6, :3]) == [3, 3, 2]  # typed special tokens are unknown words
    assert model.signatures["translate"](texts=tf.constant([], tf.string))["translation"].shape == (0,)


def test_codec_tokenizes_like_the_task_and_detokenizes_like_it(tmp_path):
    task = build_task({"name": "translation", "seed": 3, "num_train": 64, "num_validation": 4, "num_test": 4})
    task.source_vocab.to_file(tmp_path / "source.txt")
    task.target_vocab.to_file(tmp_path / "target.txt")
    codec = WordCodec(tmp_path / "source.txt", tmp_path / "target.txt", task.source_length)
    source, target = task.splits["train"]
    texts = [text.upper() for text, _ in task.texts("train")]
    np.testing.assert_array_equal(codec.encode(tf.constant(texts)).numpy(), source)
    decoded = [text.decode() for text in codec.decode(tf.constant(target[:, 1:])).numpy()]
    assert decoded == [task.detokenize_target(row) for row in target]
    assert any("'" in text for text in decoded), "the sample should exercise the elision rule"


@ahead_fixture
def rebuilt_export(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """`tx-export --beam-width 1 --attention heads` on a copy of the tiny run without its export."""
    run_dir = folder / "run"
    shutil.copytree(needs("tiny_run")[1], run_dir, ignore=shutil.ignore_patterns("export"))
    built = _cli(_script("tx-export"), str(run_dir), "--beam-width", "1", "--attention", "heads", cwd=folder)
    return run_dir, built


def test_tx_export_rebuilds_an_export_and_refuses_a_folder_that_is_not_a_run(
    rebuilt_export, tmp_path, capsys
):
    from tx_keras.cli import export

    with pytest.raises(SystemExit) as refused:  # tx-export's main in this process: a refusal reads one file
        export.main([str(tmp_path)])
    assert refused.value.code == 2
    stderr = capsys.readouterr().err
    assert (
        stderr.strip().splitlines()[-1]
        == f"tx-export: error: {tmp_path} is not a tx_keras run folder (no summary.json)"
    )
    assert "Traceback" not in stderr
    run_dir, built = rebuilt_export
    assert built.returncode == 0, built.stderr[-2000:]
    assert built.stdout.strip() == str(run_dir / "export/saved_model")
    assert "cuda" not in built.stderr.lower() and "absl" not in built.stderr, built.stderr  # quiet start-up
    manifest = json.loads((run_dir / "export/export.json").read_text())
    assert (manifest["beam_width"], manifest["attention"]) == (1, "heads")
    model = tf.saved_model.load(str(run_dir / "export/saved_model"))
    attention = model.signatures["translate_with_attention"](texts=tf.constant(["jane visits africa"]))
    assert attention["cross_attention"].shape[:3] == (1, 1, 2)  # every head of the tiny model's one layer
    assert np.allclose(attention["cross_attention"].numpy().sum(-1), 1.0, **FLOAT32)
    assert not list(run_dir.glob(".export*"))


SENTENCES = ["jane visits africa in september", "the cat"]


@ahead_fixture
def translated_with_alignments(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """`tx-translate RUN SENTENCES --attention --plot folder/alignment.png` on the tiny run."""
    plot = folder / "alignment.png"
    run_dir = needs("tiny_run")[1]
    return folder, _cli(
        _script("tx-translate"), str(run_dir), *SENTENCES, "--attention", "--plot", str(plot), cwd=folder
    )


def test_tx_translate_prints_translations_and_alignments(
    exported, translated_with_alignments, tmp_path, monkeypatch, capsys, recorded_pools
):
    from tx_keras.cli import translate

    run_dir, _ = exported
    model = tf.saved_model.load(str(run_dir / "export/saved_model"))
    expected = [
        t.decode() for t in model.signatures["translate"](texts=tf.constant(SENTENCES))["translation"].numpy()
    ]
    plots, shown = translated_with_alignments
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stderr == ""  # no engine noise either (oneDNN's int64-transpose line on AVX-512 CPUs)
    lines = shown.stdout.splitlines()
    assert lines[0] == expected[0] and expected[1] in lines
    assert "cross-attention, decoder layer 1 of 1, mean over heads:" in lines
    header = lines[lines.index("cross-attention, decoder layer 1 of 1, mean over heads:") + 1].split()
    assert header == ["jane", "visits", "africa", "in", "september", "<eos>"]
    assert (plots / "alignment-1.png").stat().st_size > 1000 and (plots / "alignment-2.png").is_file()
    # Sentences on stdin and a path that holds no export, through tx-translate's main in this process
    # (the pools it would set recorded, not set: this process's own are running).
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(SENTENCES) + "\n\n"))
    capsys.readouterr()
    translate.main([str(run_dir / "export")])
    assert capsys.readouterr().out.splitlines() == expected
    with pytest.raises(SystemExit) as missing:
        translate.main([str(tmp_path / "nowhere"), "hello"])
    assert missing.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("tx-translate: error: ")


def _translate_pools(export: Path, cwd: Path) -> tuple[int, int, int]:
    """usable cores, intra-op and inter-op threads (0 = TensorFlow's default) of a tx-translate process
    that translated with `export`, started without pool variables."""
    script = (
        "import sys, tensorflow as tf; from tx_keras.cli import translate; from tx_keras.runtime.cpu_share "
        "import usable_cores; translate.main(sys.argv[1:]); threading = tf.config.threading; "
        "print(usable_cores(), threading.get_intra_op_parallelism_threads(), "
        "threading.get_inter_op_parallelism_threads())"
    )
    environment = {k: v for k, v in os.environ.items() if k not in POOL_VARIABLES}
    shown = subprocess.run(
        [sys.executable, "-c", script, str(export), "the cat"],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    cores, intra, inter = map(int, shown.stdout.splitlines()[-1].split())
    return cores, intra, inter


@pytest.mark.slow  # ~12 s
def test_tx_translate_decodes_on_its_planned_pools(exported, tmp_path, capsys, recorded_pools):
    """On 2 usable cores (CI's machine), for an export whose decoders run two loops, tx-translate runs
    TensorFlow on 1 intra-op and 2 inter-op threads, one loop per core (decoding/row_parts.py); elsewhere,
    or for an export traced with one loop (a core would idle), on TensorFlow's defaults (0 = unset): in a
    fresh process, then the one-loop export through tx-translate's main here, with the pool setters
    recorded (none called is TensorFlow's defaults)."""
    from tx_keras.cli import translate

    run_dir, _ = exported
    loops = json.loads((run_dir / "export/export.json").read_text())["decoding_loops"]
    cores, intra, inter = _translate_pools(run_dir / "export", tmp_path)
    assert (intra, inter) == ((1, 2) if cores == 2 and loops == 2 else (0, 0))
    one_loop = shutil.copytree(run_dir / "export", tmp_path / "export")
    manifest = json.loads((one_loop / "export.json").read_text())
    (one_loop / "export.json").write_text(json.dumps({**manifest, "decoding_loops": 1}))
    translate.main([str(one_loop), "the cat"])
    assert capsys.readouterr().out.strip() and recorded_pools == {}
