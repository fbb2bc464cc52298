"""Per-layer gradient norms, activation statistics, attention entropy and rank collapse on a fixed batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.diagnostics import attention_entropy, gradient_norms_by_layer, rank_collapse_ratio
from tx_keras.diagnostics.head_diversity import head_diversity
from tx_keras.training.callbacks.summary_callback import SummaryCallback

PREFIX = "layers"  # one Scalars group, sorted after Keras' `epoch_*` curves and the `final/` scores


class Diagnostics(SummaryCallback):
    """Logs, before training (step 0) and every `every` epochs (step = completed epochs), under `layers/`:

    - `layers/gradient_norm/<layer>`: the lecture's "without Add, deep stacks stop training" made visible;
    - `layers/activation_mean/<layer>`, `layers/activation_std/<layer>`: what Norm does to each block;
    - `layers/attention_entropy/<kind>/layer_i/head_j`: how focused each head is (nats);
    - `layers/rank_collapse/<layer>`: Dong et al.'s ratio, 0 when all tokens have become the same vector;
    - `layers/head_divergence/<kind>/layer_i`, `layers/focused_heads/<kind>/layer_i` (given `probes`, the
      (source, decoder input) ids of the probe sentences): do the heads look at different positions
      (`head_diversity`: mean pairwise Jensen-Shannon divergence in bits, 0 for one head) and what share
      of them mostly at one.

    One forward and one backward pass on a fixed training batch: a few hundred milliseconds per epoch.
    Step 0 is logged when `log_start` (a fresh start): a resumed run has logged it already.
    """

    def __init__(
        self,
        log_dir: Path,
        inputs: tuple[np.ndarray, np.ndarray],
        labels: np.ndarray,
        every: int,
        log_start: bool = True,
        probes: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        super().__init__(log_dir)
        self.inputs, self.labels, self.every, self.log_start = inputs, labels, every, log_start
        self.probes = probes

    def on_train_begin(self, logs: dict | None = None) -> None:
        if self.log_start:
            self.log(0)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if (epoch + 1) % self.every == 0:
            self.log(epoch + 1)

    def measure(self) -> dict[str, float]:
        """Every diagnostic value by its tag (without the `layers/` prefix)."""
        values = {
            f"gradient_norm/{name}": norm
            for name, norm in gradient_norms_by_layer(self.model, self.inputs, self.labels).items()
        }
        _, attention, outputs = self.model.trace(self.inputs, training=False)
        masks = {"encoder": self.inputs[0] != 0, "decoder": self.inputs[1] != 0}
        for name, hidden in outputs.items():
            hidden, real = np.asarray(hidden), masks[name.split("/")[0]]
            values[f"activation_mean/{name}"] = float(hidden[real].mean())
            values[f"activation_std/{name}"] = float(hidden[real].std())
            values[f"rank_collapse/{name}"] = rank_collapse_ratio(hidden, real)
        for name, weights in attention.items():
            queries = masks["encoder" if name.startswith("encoder") else "decoder"]
            for head, entropy in enumerate(attention_entropy(np.asarray(weights), queries)):
                values[f"attention_entropy/{name}/head_{head + 1}"] = float(entropy)
        if self.probes is not None:
            values.update(self.diversity(self.probes))
        return values

    def diversity(self, inputs: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
        """Head divergence and focused share of every attention layer on `inputs` (source, decoder input)."""
        _, attention, _ = self.model.trace(inputs, training=False)
        masks = {"encoder": inputs[0] != 0, "decoder": inputs[1] != 0}
        values = {}
        for name, weights in attention.items():
            found = head_diversity(
                np.asarray(weights), masks["encoder" if name.startswith("encoder") else "decoder"]
            )
            values[f"head_divergence/{name}"] = found.divergence
            values[f"focused_heads/{name}"] = found.focused
        return values

    def log(self, step: int) -> None:
        values = self.measure()
        with self.writing():
            for tag, value in values.items():
                tf.summary.scalar(f"{PREFIX}/{tag}", value, step=step)
