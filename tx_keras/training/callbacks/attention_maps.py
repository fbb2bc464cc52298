"""Heat-maps of every attention head of every layer for the probe sentences, per selected epoch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.plots import attention_grid_image
from tx_keras.training.callbacks.probes import Probes
from tx_keras.training.callbacks.summary_callback import SummaryCallback

_TITLES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder causal self-attention",
    "cross": "cross-attention (rows: decoder, columns: encoder)",
}


def epochs_to_log(mode: str, epochs: int) -> set[int]:
    """Completed-epoch counts at which to draw: `every`, `first_last`, `off`, or `auto`.

    `auto` is every epoch for runs of up to 20 epochs, else the first and the last, so the Images
    tab's step slider shows how attention forms without a long run drowning in images.
    """
    if mode == "auto":
        mode = "every" if epochs <= 20 else "first_last"
    return {"every": set(range(1, epochs + 1)), "first_last": {1, epochs}, "off": set()}[mode]


class AttentionMaps(SummaryCallback):
    """Logs `attention/{encoder_self,decoder_self,cross}/layer_i` images: one per probe, heads in a grid.

    Decoder rows are labelled with the decoder's (teacher-forced) input words: SOS, then the reference.
    The step is the number of completed epochs.
    """

    def __init__(self, log_dir: Path, probes: Probes, epochs: set[int]):
        super().__init__(log_dir)
        self.probes, self.epochs = probes, epochs

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if epoch + 1 in self.epochs:
            self.log(epoch + 1)

    def log(self, step: int) -> None:
        _, attention, _ = self.model.trace((self.probes.source, self.probes.decoder_input), training=False)
        with self.writing():
            for name, weights in attention.items():
                kind, layer = name.split("/")
                tf.summary.image(
                    f"attention/{name}",
                    self._images(kind, layer, np.asarray(weights), step),
                    step=step,
                    max_outputs=len(self.probes),
                )

    def _images(self, kind: str, layer: str, weights: np.ndarray, step: int) -> np.ndarray:
        images = []
        for i in range(len(self.probes)):
            source, target = self.probes.source_tokens[i], self.probes.target_tokens[i]
            queries = source if kind == "encoder_self" else target
            keys = target if kind == "decoder_self" else source
            title = f"{_TITLES[kind]}, {layer.replace('_', ' ')}, epoch {step}"
            images.append(
                attention_grid_image(weights[i, :, : len(queries), : len(keys)], queries, keys, title)
            )
        return np.stack(images)
