"""A table of source / reference / model output for the probe sentences after each selected epoch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import keras
import numpy as np

from tx_keras.data import Task
from tx_keras.training.callbacks.logged_epochs import LoggedEpochs
from tx_keras.training.callbacks.probes import Probes
from tx_keras.training.callbacks.summary_callback import SummaryCallback


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or " "


class TextSamples(SummaryCallback):
    """Logs `samples/translations`: a Markdown table rendered by TensorBoard's Text tab.

    The output is the model's own greedy decoding (one word at a time until EOS), not teacher-forced,
    so the table shows what a user of the model would get at that epoch. The epoch training ends with is
    logged too, as the attention maps are (LoggedEpochs).
    """

    def __init__(self, log_dir: Path, probes: Probes, task: Task, decode: Callable, epochs: set[int]):
        super().__init__(log_dir)
        self.probes, self.task, self.decode = probes, task, decode
        self.logged = LoggedEpochs(epochs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.logged.epoch_ended(epoch):
            self.log(epoch + 1)

    def on_train_end(self, logs: dict | None = None) -> None:
        last = self.logged.training_ended()
        if last is not None:
            self.log(last)
        super().on_train_end(logs)

    def log(self, step: int) -> None:
        outputs = keras.ops.convert_to_numpy(self.decode(self.probes.source.astype(np.int32)))
        rows = ["| source | reference | model output |", "|---|---|---|"]
        for source, reference, output in zip(
            self.probes.sources, self.probes.references, outputs, strict=True
        ):
            translation = self.task.detokenize_target(output)
            rows.append(f"| {_cell(source)} | {_cell(reference)} | {_cell(translation)} |")
        with self.writing():
            import tensorflow as tf  # tf.summary writes the event files on either Keras backend

            tf.summary.text("samples/translations", "\n".join(rows), step=step)
