"""The runs' own Keras models, loaded into the TensorBoard process for the explanations that need the
model itself (gradients, teacher-forced probabilities, head knock-out).

Why the Keras model and not the SavedModel: integrated gradients need gradients of one token's
log-probability with respect to the source embeddings, and the knock-out masks heads through the blocks'
own weights (diagnostics/head_importance.py). A SavedModel's signatures start from strings or ids, so
neither is reachable through them without a new export; the `.keras` file every completed run writes holds
the same trained weights and runs the same blocks, here under `tf.GradientTape`. Training never runs any
of this: it happens when the page asks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tx_keras.explorer.typed_sentence import SentenceError
from tx_keras.export.saved_model_loader import EXPORT_DIR
from tx_keras.run_folder.summary import summary_or_none
from tx_keras.special_tokens import SOS

if (
    TYPE_CHECKING
):  # the data and export packages import Keras: loaded with the first model, not with TensorBoard
    from tx_keras.data.vocabulary import Vocabulary

KEEP = 2  # models kept loaded at once (the page explains one run at a time; a sweep has many)


@dataclass
class RunModel:
    """A run's model with its vocabularies; `lock` serialises its use: a knock-out masks the model's own
    weights for the length of one request, which no other request may see."""

    model: object
    source: Vocabulary
    target: Vocabulary
    importance: dict[str, list[float]] | None  # summary.json's head importance, when the run measured it
    lock: threading.Lock = field(default_factory=threading.Lock)
    probe_importance: tuple | None = None  # (the probes it was measured on, kind/layer -> increases)

    def source_ids(self, tokens: list[str]) -> np.ndarray:
        """(1, Ts) ids of logged source tokens (the tokenizer's pieces, EOS last)."""
        return np.asarray([self.source.encode(tokens)], np.int32)

    def target_ids(self, tokens: list[str]) -> np.ndarray:
        """(1, T) label ids of output tokens (EOS last where the sentence ended)."""
        return np.asarray([self.target.encode(tokens)], np.int32)


def decoder_input(target_ids: np.ndarray) -> np.ndarray:
    """Labels (B, T) -> teacher-forced decoder input (B, T): SOS, then the labels but the last."""
    return np.concatenate([np.full((len(target_ids), 1), SOS, np.int32), target_ids[:, :-1]], axis=1)


def model_file(folder: Path) -> Path | None:
    """The export's float32 `.keras` (the inference copy), else the one the run wrote when it ended."""
    from tx_keras.export.run_export import MODEL_FILE

    for candidate in (folder / EXPORT_DIR / MODEL_FILE, folder / MODEL_FILE):
        if candidate.is_file():
            return candidate
    return None


def unreadable(what: Path, error: Exception) -> SentenceError:
    """The page's refusal of a run whose export or model cannot be read (cut, emptied or overwritten):
    HTTP 409, since the run folder conflicts with what the route needs; the traceback stays out of it."""
    remedy = "write it again with tx-export RUN_DIR" if what.parts[0] == EXPORT_DIR else "the file is damaged"
    return SentenceError(
        f"this run's {what.as_posix()} cannot be read ({type(error).__name__}); {remedy}", 409
    )


class RunModels:
    """Loads a run folder's Keras model on first use and keeps the last `keep`; reloads a re-exported one."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._loaded: OrderedDict[Path, tuple[float, RunModel]] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0

    def get(self, folder: Path) -> RunModel:
        path = model_file(folder)
        if path is None:
            raise SentenceError("this run has no model.keras (still training, or deleted?)", 404)
        stamp = path.stat().st_mtime
        with self._lock:
            cached = self._loaded.get(folder)
            if cached and cached[0] == stamp:
                self._loaded.move_to_end(folder)
                return cached[1]
            entry = _load(folder, path)
            self.loads += 1
            self._loaded[folder] = (stamp, entry)
            while len(self._loaded) > self.keep:
                self._loaded.popitem(last=False)
            return entry


def _load(folder: Path, path: Path) -> RunModel:
    import keras

    import tx_keras.models  # noqa: F401  (registers the serializable classes)
    from tx_keras.export.run_export import SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE

    try:
        model = keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as error:  # the folder's file, not the server, is what is broken
        raise unreadable(path.relative_to(folder), error) from None
    if model.dtype_policy.name != "float32":  # gradients in bfloat16 are too coarse to rank tokens
        copy = type(model).from_config({**model.get_config(), "dtype": "float32"})
        copy.build(((None, model.max_source_length), (None, model.max_target_length)))
        copy.set_weights(model.get_weights())
        model = copy
    importance = (summary_or_none(folder) or {}).get("head_importance")
    return RunModel(
        model,
        _vocabulary(folder, SOURCE_VOCAB_FILE, model.source_vocab_size),
        _vocabulary(folder, TARGET_VOCAB_FILE, model.target_vocab_size),
        importance.get("loss_increase") if isinstance(importance, dict) else None,
    )


def _vocabulary(folder: Path, name: str, size: int) -> Vocabulary:
    """The run's vocabulary file `name`, refused (409) unless it reads and holds the model's `size`
    tokens: a cut one would give the model's output ids no token to show."""
    from tx_keras.data.vocabulary import Vocabulary

    try:
        vocabulary = Vocabulary.from_file(folder / name)
    except (OSError, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise unreadable(Path(name), error) from None
    if len(vocabulary) != size:
        raise SentenceError(
            f"this run's {name} holds {len(vocabulary)} tokens, its model {size}; the file is damaged", 409
        )
    return vocabulary
