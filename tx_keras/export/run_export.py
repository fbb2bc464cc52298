"""From a finished run folder to `RUN_DIR/export/`: the SavedModel, the .keras file, a small manifest."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from importlib.metadata import version as package_version
from pathlib import Path

import keras

from tx_keras.data import Task
from tx_keras.data.text_format import load_formats, save_formats
from tx_keras.decoding.row_parts import concurrent_loops
from tx_keras.export.export_config import ATTENTION_MODES, ExportConfig
from tx_keras.export.saved_model_loader import EXPORT_DIR, MANIFEST_FILE, SAVED_MODEL_DIR
from tx_keras.models import Transformer
from tx_keras.run_folder.atomic_write import atomic_file, write_json
from tx_keras.run_folder.summary import SUMMARY_NAME, read_summary
from tx_keras.runtime.tensorflow_presence import tensorflow_installed

# What a run folder holds for export (written by `save_for_export` at the end of a completed run).
MODEL_FILE = "model.keras"
SOURCE_VOCAB_FILE = "source_vocab.txt"
TARGET_VOCAB_FILE = "target_vocab.txt"
TEXT_FORMAT_FILE = "text_format.json"  # real-text runs only: how the vocabularies tokenize text


class NotARunError(ValueError):
    """The folder given to export is not a completed tx_keras run: one line for the user, no traceback."""


@dataclass(frozen=True)
class ExportSettings:
    """How the exported model decodes: beam width (1 = greedy), GNMT length penalty alpha, and whether
    `translate_with_attention` averages the cross-attention over heads ("mean") or keeps them ("heads")."""

    beam_width: int = 4
    length_penalty: float = 0.6
    attention: str = "mean"

    def __post_init__(self) -> None:
        if self.beam_width < 1:
            raise ValueError(f"beam_width={self.beam_width} must be >= 1")
        if self.length_penalty < 0:
            raise ValueError(f"length_penalty={self.length_penalty} must be >= 0")
        if self.attention not in ATTENTION_MODES:
            raise ValueError(f"attention={self.attention!r}; choose one of: {', '.join(ATTENTION_MODES)}")

    @classmethod
    def of(cls, export: ExportConfig) -> ExportSettings:
        """The decoding settings of the `export` config group."""
        return cls(export.beam_width, float(export.length_penalty), export.attention)


def save_for_export(run_dir: Path, model: Transformer, task: Task) -> None:
    """The trained model and both vocabularies, so `tx-export` can work from the run folder alone."""
    task.source_vocab.to_file(run_dir / SOURCE_VOCAB_FILE)
    task.target_vocab.to_file(run_dir / TARGET_VOCAB_FILE)
    if task.is_text:
        save_formats(run_dir / TEXT_FORMAT_FILE, task.source_format, task.target_format)
    with atomic_file(run_dir / MODEL_FILE) as temp:
        model.save(temp)


def _inference_copy(model: Transformer) -> Transformer:
    """The same architecture and weights without the optimizer and loss, so the exported .keras file
    loads (safe_mode=True) with only `tx_keras.models` imported and carries no training state.

    Always float32: mixed precision (`trainer.precision`) is a training speed-up, and its float32 master
    weights serve exactly, on any CPU, in the SavedModel and the .keras file alike."""
    copy = Transformer.from_config({**model.get_config(), "dtype": "float32"})
    copy.build(((None, model.max_source_length), (None, model.max_target_length)))
    copy.set_weights(model.get_weights())
    return copy


@contextmanager
def _quiet_saving() -> Iterator[None]:
    """SavedModel writing logs a line per renamed graph input at INFO; under tx-train's logging they
    would flood the console and train.log with nothing a user can act on."""
    loggers = [logging.getLogger(name) for name in ("absl", "tensorflow")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(max(logger.level, logging.WARNING))
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _codec(run_dir: Path, max_source_length: int):
    """The run's tokenizers (TensorFlow modules): WordPiece/characters when it trained on real text, else
    words."""
    from tx_keras.export.text_codec import TextCodec
    from tx_keras.export.word_codec import WordCodec

    vocabularies = run_dir / SOURCE_VOCAB_FILE, run_dir / TARGET_VOCAB_FILE
    if (run_dir / TEXT_FORMAT_FILE).is_file():
        return TextCodec(*vocabularies, *load_formats(run_dir / TEXT_FORMAT_FILE), max_source_length)
    return WordCodec(*vocabularies, max_source_length)


def export_model(model: Transformer, run_dir: Path, destination: Path, settings: ExportSettings) -> Path:
    """Write `destination/{saved_model/, model.keras, export.json}` with the tokenizers saved in `run_dir`;
    returns the SavedModel folder.

    Built in a temporary sibling folder and renamed into place, so a crash never leaves half an
    export where a server would look for one, and a re-export replaces the old one whole.
    """
    destination = Path(destination)
    building = destination.parent / f".{destination.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        from tx_keras.export.translator import Translator  # TensorFlow: only a TensorFlow process exports

        codec = _codec(run_dir, model.max_source_length)
        model = _inference_copy(model)
        translator = Translator(
            model, codec, settings.beam_width, settings.length_penalty, settings.attention
        )
        signatures = translator.signatures()
        import tensorflow as tf  # only here: a JAX run reaches this function in a TensorFlow process

        with _quiet_saving():
            tf.saved_model.save(translator, str(building / SAVED_MODEL_DIR), signatures=signatures)
        model.save(building / MODEL_FILE)
        manifest = {
            **asdict(settings),
            "signatures": sorted(signatures),
            "requires_tensorflow_text": codec.requires_tensorflow_text,
            "decoding_loops": concurrent_loops(),  # as the signatures were traced: tx-translate's pools
            "max_source_length": model.max_source_length,
            "max_target_length": model.max_target_length,
            "tx_keras_version": package_version("tx_keras"),
        }
        write_json(building / MANIFEST_FILE, manifest, sort_keys=False)
        previous = destination.parent / f".{destination.name}.previous-{os.getpid()}"
        if destination.exists():
            destination.rename(previous)
        building.rename(destination)
        shutil.rmtree(previous, ignore_errors=True)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return destination / SAVED_MODEL_DIR


def read_run_summary(run_dir: Path) -> dict:
    """The run's summary, or `NotARunError` saying what is missing."""
    if not run_dir.is_dir():
        raise NotARunError(f"{run_dir} is not a folder")
    if not (run_dir / SUMMARY_NAME).is_file():
        raise NotARunError(f"{run_dir} is not a tx_keras run folder (no {SUMMARY_NAME})")
    summary = read_summary(run_dir)
    if summary.get("status") != "completed":
        raise NotARunError(f"{run_dir}: the run did not complete (status {summary.get('status')!r})")
    missing = [
        name for name in (MODEL_FILE, SOURCE_VOCAB_FILE, TARGET_VOCAB_FILE) if not (run_dir / name).is_file()
    ]
    if missing:
        raise NotARunError(f"{run_dir} lacks {', '.join(missing)} (written by tx-train at the end of a run)")
    return summary


def run_settings(summary: Mapping) -> ExportSettings:
    """The run's own `export` settings; `length_penalty: auto` means the alpha its validation chose
    (summary.json: length_penalty.chosen), the one its beam figures were decoded with."""
    recorded = summary.get("config", {}).get("export") or {}
    known = {field.name for field in fields(ExportConfig)}  # an older run's keys: the defaults
    export = ExportConfig(**{key: value for key, value in recorded.items() if key in known})
    if export.length_penalty == "auto":
        chosen = summary.get("length_penalty", {}).get("chosen", ExportSettings.length_penalty)
        export = replace(export, length_penalty=chosen)
    return ExportSettings.of(export)


def export_run(run_dir: Path, settings: ExportSettings | None = None, completed: bool = True) -> Path:
    """Export a completed run folder; settings default to the run's own `export` config group.

    `completed=False`: the run is still ending (a JAX run exporting through TensorFlow, below), so it has
    no summary yet: `settings` must be given."""
    run_dir = Path(run_dir)
    if completed or settings is None:
        summary = read_run_summary(run_dir)
        settings = settings or run_settings(summary)
    model = keras.saving.load_model(run_dir / MODEL_FILE, compile=False, safe_mode=True)
    return export_model(model, run_dir, run_dir / EXPORT_DIR, settings)


def export_in_tensorflow(run_dir: Path, settings: ExportSettings) -> Path:
    """`export_model` for a run Keras trained on another backend: `tx-export` in a TensorFlow process of
    its own, from the saved model.keras (plain weights, backend-neutral), since a SavedModel is a
    TensorFlow graph and a process runs Keras on one backend only. Its last stderr line is the error
    if it fails."""
    command = [
        sys.executable,
        "-m",
        "tx_keras.cli.export",
        str(run_dir),
        "--beam-width",
        str(settings.beam_width),
        "--length-penalty",
        repr(settings.length_penalty),
        "--attention",
        settings.attention,
        "--during-run",
    ]
    environment = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise RuntimeError(f"tx-export in a TensorFlow process failed: {last[0]}")
    return Path(done.stdout.strip().splitlines()[-1])


def save_and_export(run_dir: Path, model: Transformer, task: Task, export: ExportConfig) -> dict[str, str]:
    """End of a completed run: keep what export needs, then export unless `export.enabled` is false.

    Returns the summary field naming the SavedModel folder (relative to the run folder), if written.
    """
    save_for_export(run_dir, model, task)
    if not export.enabled or not tensorflow_installed():  # without_tensorflow.py
        return {}
    settings = ExportSettings.of(export)
    if keras.backend.backend() == "tensorflow":
        saved_model = export_model(model, run_dir, run_dir / EXPORT_DIR, settings)
    else:
        saved_model = export_in_tensorflow(run_dir, settings)
    return {"export": str(saved_model.relative_to(run_dir))}
