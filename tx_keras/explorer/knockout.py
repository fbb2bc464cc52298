"""Head knock-out for one sentence: the run's model with chosen heads masked through the blocks' own weights
(diagnostics/head_importance.py zeroes a head's rows of W_o, exactly removing its term of
concat(heads) @ W_o, and puts them back bit for bit), so the same model and the same call translate with
and without them (Michel et al. 2019; Voita et al. 2019 showed most NMT heads can go while a few carry
the work)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from tx_keras.diagnostics.head_importance import attention_layers, head_masked
from tx_keras.explorer.typed_sentence import SentenceError

KINDS = ("encoder_self", "decoder_self", "cross")


def head_grid(model) -> dict[str, list[int]]:
    """kind -> heads per layer, as the page draws the knock-out checkboxes."""
    grid: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for name, layer in attention_layers(model).items():
        grid[name.split("/")[0]].append(layer.num_heads)
    return grid


def checked_heads(model, heads: object) -> list[tuple[str, int, int]]:
    """`heads` as sent by the page ([[kind, layer, head], ...], 0-based layer and head) checked against
    the model; SentenceError (HTTP 400) names the first that does not exist."""
    if heads is None:
        return []
    if not isinstance(heads, list) or len(heads) > 4096:
        raise SentenceError("`heads_off` must be a list of [kind, layer, head]")
    grid, checked = head_grid(model), []
    for item in heads:
        if (
            not isinstance(item, list)
            or len(item) != 3
            or not isinstance(item[0], str)
            or item[0] not in grid
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in item[1:])
            or not 0 <= item[1] < len(grid[item[0]])
            or not 0 <= item[2] < grid[item[0]][item[1]]
        ):
            raise SentenceError(f"no such head: {item!r} (kinds {', '.join(KINDS)}; layers and heads from 0)")
        checked.append((item[0], item[1], item[2]))
    return sorted(set(checked))


@contextmanager
def heads_off(model, heads: list[tuple[str, int, int]]) -> Iterator[None]:
    """Inside, every head of `heads` contributes nothing; afterwards the weights are as before."""
    layers = attention_layers(model)
    with ExitStack() as stack:
        for kind, layer, head in heads:
            stack.enter_context(head_masked(layers[f"{kind}/layer_{layer + 1}"], head))
        yield
