"""Head importance the cheap way (Michel, Levy, Neubig 2019, "Are Sixteen Heads Really Better than One?"):
the validation loss with one head masked out at a time, minus the loss with every head.

A head is masked the way every attention form documents (`MultiHeadBase`, "Masking a head"): its rows of
the layer's output matrix W_o (`output_weight`) are zeroed, which removes exactly its contribution to
`concat(heads) @ W_o` (the output bias stays). The weights are put back bit for bit afterwards, so
measuring leaves the trained model as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import keras
import numpy as np

from tx_keras.layers.multi_head_base import MultiHeadBase

# (stack, sublayer) in a weight's path -> the attention kind, as Transformer.trace names its maps.
_KINDS = {
    ("encoder", "self_attention"): "encoder_self",
    ("decoder", "self_attention"): "decoder_self",
    ("decoder", "cross_attention"): "cross",
}


def attention_layers(model: keras.Model) -> dict[str, MultiHeadBase]:
    """Every attention sublayer by the name its maps have in `Transformer.trace` (`cross/layer_2`), in the
    order encoder self, decoder self, cross, then by depth."""
    found = {}
    for layer in model._flatten_layers(include_self=False):
        if isinstance(layer, MultiHeadBase):
            stack, block, sublayer = layer.path.split("/")[-3:]
            found[(list(_KINDS.values()).index(_KINDS[stack, sublayer]), int(block.split("_")[-1]))] = layer
    names = list(_KINDS.values())
    return {f"{names[kind]}/layer_{depth}": found[kind, depth] for kind, depth in sorted(found)}


@contextmanager
def head_masked(layer: MultiHeadBase, head: int) -> Iterator[None]:
    """Inside the block `head` (0-based) of `layer` contributes nothing; after it W_o is exactly as before."""
    weight = layer.output_weight
    saved = keras.ops.convert_to_numpy(weight).copy()
    masked = saved.copy()
    masked.reshape(layer.num_heads, -1, saved.shape[-1])[head] = 0  # rows of head i, either layout
    weight.assign(masked)
    try:
        yield
    finally:
        weight.assign(saved)


@dataclass(frozen=True)
class HeadImportance:
    """`base_loss`: the validation loss with every head; `increase`: per layer name, the loss with head i
    masked minus `base_loss` (positive: the model needs that head)."""

    base_loss: float
    increase: dict[str, list[float]]

    def record(self) -> dict:
        """The summary.json field."""
        return {"base_loss": self.base_loss, "loss_increase": self.increase}

    def markdown(self, rows: int) -> str:
        """A table, layers down, heads across, of the loss increase, with what it was measured on."""
        heads = max(len(values) for values in self.increase.values())
        lines = [
            "# Head importance\n",
            f"Validation loss (per token, label-smoothed as in training) on the first {rows} validation "
            f"pairs with every head: {self.base_loss:.4f}. Each cell: the loss with that one head masked "
            "out (its rows of W_o zeroed) minus that; positive means the model needs the head "
            "(Michel et al. 2019).\n",
            "| layer | " + " | ".join(f"head {i + 1}" for i in range(heads)) + " |",
            "|---|" + "---|" * heads,
        ]
        lines += [
            f"| {name} | " + " | ".join(f"{v:+.4f}" for v in values) + " |"
            for name, values in self.increase.items()
        ]
        return "\n".join(lines) + "\n"


def head_importance(model: keras.Model, loss: Callable[[], float]) -> HeadImportance:
    """`loss()` (the validation loss of `model` as it is) once, then once per head with that head masked."""
    base = float(loss())
    increase = {}
    for name, layer in attention_layers(model).items():
        values = []
        for head in range(layer.num_heads):
            with head_masked(layer, head):
                values.append(float(loss()) - base)
        increase[name] = values
    return HeadImportance(base, increase)


def importance_matrix(importance: HeadImportance) -> np.ndarray:
    """(layers, max heads) loss increases, NaN where a layer has fewer heads (for the heat-map)."""
    heads = max(len(values) for values in importance.increase.values())
    matrix = np.full((len(importance.increase), heads), np.nan)
    for row, values in enumerate(importance.increase.values()):
        matrix[row, : len(values)] = values
    return matrix
