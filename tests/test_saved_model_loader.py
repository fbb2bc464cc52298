"""The one SavedModel loader (tx-translate, the explorer, tx-bench): tensorflow-text is imported unless the
export's manifest says its graph needs only core ops, so an export without a manifest still loads."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from tx_keras.export.saved_model_loader import decoding_loops, find_saved_model, needs_tensorflow_text


class _CaseFold(tf.Module):
    """A graph with one tensorflow-text op, as a real-text run's tokenizer has."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def fold(self, texts):
        return tf_text.case_fold_utf8(texts)


@pytest.fixture(scope="module")
def text_export(tmp_path_factory) -> Path:
    """RUN/export/saved_model of a tf-text graph, with no export.json beside it."""
    saved_model = tmp_path_factory.mktemp("run") / "export" / "saved_model"
    tf.saved_model.save(_CaseFold(), str(saved_model))
    return saved_model


def _manifest(saved_model: Path, content: str | None) -> None:
    manifest = saved_model.parent / "export.json"
    manifest.unlink(missing_ok=True)
    if content is not None:
        manifest.write_text(content)


@pytest.mark.parametrize(
    ("manifest", "needed"),
    [
        (json.dumps({"requires_tensorflow_text": False}), False),
        (json.dumps({"requires_tensorflow_text": True}), True),
        (json.dumps({"beam_width": 4}), True),  # a manifest from before the key: nothing says
        (None, True),  # no manifest: a bare SavedModel, or an export older than manifests
        ("{not json", True),
    ],
)
def test_tensorflow_text_is_imported_unless_the_manifest_says_core_ops(text_export, manifest, needed):
    _manifest(text_export, manifest)
    assert needs_tensorflow_text(text_export) is needed


@pytest.mark.parametrize(
    ("manifest", "loops"),
    [
        (json.dumps({"decoding_loops": 2}), 2),
        (json.dumps({"decoding_loops": 1}), 1),
        (json.dumps({"beam_width": 4}), None),  # an export from before the key
        (json.dumps({"decoding_loops": "2"}), None),
        (None, None),
        ("{not json", None),
    ],
)
def test_the_manifest_says_how_many_loops_the_decoders_run(text_export, manifest, loops):
    _manifest(text_export, manifest)
    assert decoding_loops(text_export) == loops


def test_an_export_without_a_manifest_loads_where_a_plain_load_fails(text_export):
    """In a fresh process (no tensorflow_text imported yet): tf.saved_model.load fails on the tf-text op,
    as tx-translate did when a run had no manifest; the shared loader loads it and runs it."""
    _manifest(text_export, None)
    script = (
        "import sys, tensorflow as tf\n"
        "try:\n"
        "    tf.saved_model.load(sys.argv[1])\n"
        "    print('plain load: ok')\n"
        "except Exception as error:\n"
        "    print('plain load: failed', 'CaseFoldUTF8' in str(error))\n"
        "from tx_keras.export.saved_model_loader import load_saved_model\n"
        "model = load_saved_model(__import__('pathlib').Path(sys.argv[1]))\n"
        "print(model.fold(tf.constant(['ÀB'])).numpy()[0].decode())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(text_export)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == ["plain load: failed True", "àb"]


def test_find_saved_model_takes_a_run_an_export_folder_or_the_saved_model(text_export):
    run = text_export.parent.parent
    assert find_saved_model(run) == text_export
    assert find_saved_model(run / "export") == text_export
    assert find_saved_model(text_export) == text_export
    assert find_saved_model(run.parent) is None
