"""Heat-maps of every attention head of every layer for the probe sentences, per selected epoch, and the
raw weights behind them for the Attention tab (tx_keras.explorer)."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.plots import attention_grid_image
from tx_keras.run_folder.attention_format import KINDS, ProbeAttention
from tx_keras.run_folder.attention_summaries import (
    BYTES_PER_WEIGHT,
    probes_within,
    stack_layers,
    write_attention,
)
from tx_keras.training.callbacks.logged_epochs import LoggedEpochs
from tx_keras.training.callbacks.probes import Probes
from tx_keras.training.callbacks.summary_callback import SummaryCallback

_TITLES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder causal self-attention",
    "cross": "cross-attention (decoder -> encoder)",
}
_LOG = logging.getLogger(__name__)


def epochs_to_log(mode: str, epochs: int) -> set[int]:
    """Completed-epoch counts at which to draw: `every`, `first_last`, `off`, or `auto`.

    `auto` is every epoch for runs of up to 20 epochs, else the first and the last, so the Images
    tab's step slider shows how attention forms without a long run drowning in images. The last is
    `epochs`, the configured upper bound: a run that ends sooner logs its own last epoch as it ends
    (LoggedEpochs).
    """
    if mode == "auto":
        mode = "every" if epochs <= 20 else "first_last"
    return {"every": set(range(1, epochs + 1)), "first_last": {1, epochs}, "off": set()}[mode]


def _stack(images: list[np.ndarray]) -> np.ndarray:
    """Pad images of different sentence lengths with white to one size, so they form one summary."""
    height = max(image.shape[0] for image in images)
    width = max(image.shape[1] for image in images)
    canvas = np.full((len(images), height, width, 3), 255, dtype=np.uint8)
    for i, image in enumerate(images):
        canvas[i, : image.shape[0], : image.shape[1]] = image
    return canvas


class AttentionMaps(SummaryCallback):
    """Logs `attention/{encoder_self,decoder_self,cross}/layer_i` images: one per probe, heads in a grid,
    and `attention_explorer/probe_i/{kind}` tensors: the probe's raw (layers, heads, queries, keys) weights
    as float16 with its tokens in the summary metadata, for the Attention tab. The tensors of one epoch
    stay under `tensors_mb`: probes past the cap are left out (a warning says so); 0 writes none.

    Decoder rows are labelled with the decoder's (teacher-forced) input words: SOS, then the reference.
    The step is the number of completed epochs (the raw weights also at 0, before training); the epoch
    training ends with is logged too, whether the run was stopped early or not. The weights
    are taken in the training thread (one small forward pass); drawing and writing happen in a background
    thread, so training goes on meanwhile.
    """

    def __init__(self, log_dir: Path, probes: Probes, epochs: set[int], tensors_mb: float = 1.0):
        super().__init__(log_dir)
        self.probes, self.epochs = probes, epochs
        self.logged = LoggedEpochs(epochs)
        self.tensors_bytes = int(tensors_mb * 2**20)
        self._warned = False
        self._painter: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        """Before the first epoch of a fresh run: the raw weights at step 0 (no images), so the Attention
        tab's slider starts from the untrained model even when early stopping ends the run at epoch 1."""
        if epoch == 0 and self.epochs and self.tensors_bytes:
            self.log(0, images=False)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.logged.epoch_ended(epoch):
            self.log(epoch + 1)

    def log(self, step: int, images: bool = True) -> None:
        _, attention, _ = self.model.trace((self.probes.source, self.probes.decoder_input), training=False)
        weights = {name: np.asarray(value) for name, value in attention.items()}
        self._painter = self._painter or ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="attention-maps"
        )
        self._pending.append(self._painter.submit(self._write, weights, step, images))

    def wait_written(self) -> None:
        """Block until every epoch logged so far is written (and surface any drawing error)."""
        for future in list(self._pending):
            future.result()

    def _write(self, attention: dict[str, np.ndarray], step: int, images: bool) -> None:
        with self.writing():
            for name, weights in attention.items() if images else ():
                kind, layer = name.split("/")
                tf.summary.image(
                    f"attention/{name}",
                    self._images(kind, layer, weights, step),
                    step=step,
                    max_outputs=len(self.probes),
                )
            write_attention(self._explorer_records(attention), step)

    def _explorer_records(self, attention: dict[str, np.ndarray]) -> list[tuple[ProbeAttention, np.ndarray]]:
        """Each probe's weights per kind, cut to its real tokens, for the probes that fit in the cap."""
        per_probe: list[list[tuple[ProbeAttention, np.ndarray]]] = []
        stacked = {kind: stack_layers(attention, kind) for kind in KINDS}  # once, not once per probe
        for i in range(len(self.probes)):
            source, target = self.probes.source_tokens[i], self.probes.target_tokens[i]
            records = []
            for kind in KINDS:
                weights = stacked[kind][i]
                record = ProbeAttention(
                    probe=i,
                    kind=kind,
                    queries=source if kind == "encoder_self" else target,
                    keys=target if kind == "decoder_self" else source,
                    source=self.probes.sources[i],
                    reference=self.probes.references[i],
                )
                cropped = weights[:, :, : len(record.queries), : len(record.keys)]
                records.append((record, cropped.astype(np.float16)))
            per_probe.append(records)
        sizes = [sum(weights.size * BYTES_PER_WEIGHT for _, weights in records) for records in per_probe]
        kept = probes_within(sizes, self.tensors_bytes)
        if kept < len(per_probe) and self.tensors_bytes and not self._warned:
            self._warned = True
            _LOG.warning(
                "Attention tab: %d of %d probes fit in logging.attention_tensors_mb=%.3g (%s bytes each)",
                kept,
                len(per_probe),
                self.tensors_bytes / 2**20,
                ", ".join(map(str, sizes)),
            )
        return [record for records in per_probe[:kept] for record in records]

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
        return _stack(images)

    def on_train_end(self, logs: dict | None = None) -> None:
        """Log the epoch training ended with if it was not chosen (a time budget or early stopping ended
        the run), then wait for the last images (and surface any drawing error) before the writer closes."""
        last = self.logged.training_ended()
        if last is not None:
            self.log(last)
        if self._painter is not None:
            self._painter.shutdown(wait=True)
            self._painter = None
        pending, self._pending = self._pending, []
        super().on_train_end(logs)
        for future in pending:
            future.result()
