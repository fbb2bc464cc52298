"""A table of source / reference / model output for the probe sentences after each selected epoch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import tensorflow as tf

from tx_keras.data import Task
from tx_keras.training.callbacks.probes import Probes
from tx_keras.training.callbacks.summary_callback import SummaryCallback


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or " "


class TextSamples(SummaryCallback):
    """Logs `samples/translations`: a Markdown table rendered by TensorBoard's Text tab.

    The output is the model's own greedy decoding (one word at a time until EOS), not teacher-forced,
    so the table shows what a user of the model would get at that epoch.
    """

    def __init__(self, log_dir: Path, probes: Probes, task: Task, decode: Callable, epochs: set[int]):
        super().__init__(log_dir)
        self.probes, self.task, self.decode, self.epochs = probes, task, decode, epochs

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if epoch + 1 not in self.epochs:
            return
        outputs = self.decode(tf.constant(self.probes.source, tf.int32)).numpy()
        rows = ["| source | reference | model output |", "|---|---|---|"]
        for i, output in enumerate(outputs):
            source = self.task.detokenize_source(self.probes.source[i])
            translation = self.task.detokenize_target(output)
            rows.append(f"| {_cell(source)} | {_cell(self.probes.references[i])} | {_cell(translation)} |")
        with self.writing():
            tf.summary.text("samples/translations", "\n".join(rows), step=epoch + 1)
