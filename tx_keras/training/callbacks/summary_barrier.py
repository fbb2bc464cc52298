"""Wait for the dashboard's background writes before an epoch is checkpointed."""

from __future__ import annotations

import keras


class SummaryBarrier(keras.callbacks.Callback):
    """At each epoch's end, waits until the callbacks that write from a background thread (the attention
    maps) have written that epoch, so a run killed right after the checkpoint has the epoch's images.

    Without it the checkpoint can land first; the resumed run starts after that epoch and never draws its
    maps again (seen under load: the Images slider then lacked epoch 1). Put it just before the checkpoint.
    """

    def __init__(self, callbacks: list[keras.callbacks.Callback]):
        super().__init__()
        self.writers = [callback for callback in callbacks if hasattr(callback, "wait_written")]

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        for writer in self.writers:
            writer.wait_written()
