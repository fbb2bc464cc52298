"""An export read back: where its SavedModel is, and loading it the one way every reader does (tx-translate,
the explorer's typed sentences, tx-bench's SavedModel timing).

A real-text run's SavedModel uses tensorflow-text ops (WordPiece, Unicode normalisation) that must be
registered, by `import tensorflow_text`, before the graph loads; a word-level run's uses core ops only.
The export's manifest (export.json beside saved_model/) says which. Without a readable manifest (an export
from before manifests, or a saved_model/ folder copied on its own) nothing says, so tensorflow-text is
imported: it is a dependency of tx_keras, while loading its ops without it fails ("Op type not
registered"). Imports nothing heavy until a model is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

EXPORT_DIR = "export"  # RUN_DIR/export/: what tx-export writes
SAVED_MODEL_DIR = "saved_model"  # RUN_DIR/export/saved_model/
MANIFEST_FILE = "export.json"  # RUN_DIR/export/export.json: settings, signatures, tensorflow-text, loops


def find_saved_model(path: Path) -> Path | None:
    """PATH itself, PATH/saved_model (an export folder) or PATH/export/saved_model (a run folder); None
    when none of them holds a SavedModel."""
    for candidate in (path, path / SAVED_MODEL_DIR, path / EXPORT_DIR / SAVED_MODEL_DIR):
        if (candidate / "saved_model.pb").is_file():
            return candidate
    return None


def _manifest(saved_model: Path) -> dict | None:
    """The export's manifest beside `saved_model`, or None where there is no readable one."""
    try:
        manifest = json.loads((saved_model.parent / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return manifest if isinstance(manifest, dict) else None


def needs_tensorflow_text(saved_model: Path) -> bool:
    """Whether loading `saved_model` needs tensorflow-text's ops: what its manifest says, else yes."""
    manifest = _manifest(saved_model)
    return manifest is None or bool(manifest.get("requires_tensorflow_text", True))


def decoding_loops(saved_model: Path) -> int | None:
    """How many loops over parts of a batch's rows the export's decoders run (decoding/row_parts.py), as
    its manifest says; None for an export from before the manifest kept it."""
    loops = (_manifest(saved_model) or {}).get("decoding_loops")
    return loops if isinstance(loops, int) else None


def load_saved_model(saved_model: Path):
    """The loaded SavedModel (keep a reference to it while calling its signatures)."""
    import tensorflow as tf

    if needs_tensorflow_text(saved_model):
        import tensorflow_text  # noqa: F401  (registers the tokenizer ops the graph uses)
    return tf.saved_model.load(str(saved_model))
