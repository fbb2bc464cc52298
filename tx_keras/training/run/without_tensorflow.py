"""What a run on a machine without TensorFlow writes and what it leaves out, in one place: the run's
callbacks, its end, its summary.json and its report all read it (docs/configuring.md says the same).

Such a run (trainer.backend=jax; runtime/tensorflow_presence.py) trains on numpy batches
(batching/numpy_batches.py), evaluates, and writes summary.json, checkpoints, model.keras, the translations
and its scalar curves (run_folder/scalar_writer.py: TensorBoard event files through TensorBoard's own
writer, or CSV files without it). The parts below are written with tf.summary images/text or are a
TensorFlow graph, so it skips them.
"""

from __future__ import annotations

from tx_keras.export.export_config import ExportConfig
from tx_keras.run_folder.scalar_writer import scalar_writer_kind
from tx_keras.training.logging_config import LoggingConfig

EXPORT_LATER = "tx-export {run_dir}"  # on a machine with TensorFlow: the SavedModel from model.keras


def skipped_parts(logging: LoggingConfig, export: ExportConfig) -> list[str]:
    """The outputs the config asks for that a run without TensorFlow cannot write."""
    skipped = []
    if logging.tensorboard:
        if logging.probes and logging.attention_maps not in (None, "none", 0):
            skipped.append("attention maps and translation samples (logging.attention_maps, logging.probes)")
        if logging.diagnostics_every:
            skipped.append("training diagnostics (logging.diagnostics_every)")
        skipped.append("the HParams row")
    if logging.head_importance:
        skipped.append("head importance (logging.head_importance)")
    if export.enabled:
        skipped.append("the SavedModel export")
    return skipped


def record(logging: LoggingConfig, export: ExportConfig, run_dir) -> dict:
    """summary.json's `without_tensorflow` entry: how the curves were written, what was left out, and how
    to export later."""
    entry = {
        "scalars": scalar_writer_kind() if logging.tensorboard else "off",
        "skipped": skipped_parts(logging, export),
    }
    if export.enabled:
        entry["export_later"] = EXPORT_LATER.format(run_dir=run_dir)
    return entry
