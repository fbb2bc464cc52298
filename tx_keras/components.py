"""Which class builds each swappable part of a model: a built-in name or a user's own import path.

A model config names its attention, position encoding, feed-forward network and norm by string, so that a
user tries a new form by writing `model.attention_impl=my_package.my_module.MyAttention` instead of forking
the suite. Built-ins are import paths too, resolved lazily, so this module imports nothing heavy: the
config check names the built-ins before TensorFlow starts, and imports only a user's own classes.

A leaf at the bottom of the package, below the layers: the layers resolve their parts through it (the
embedding its positions, AddNorm its norm) and the models their blocks' parts, and a lower package never
imports a higher one (tests/test_import_layers.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import keras

# kind -> built-in name -> import path ("none" positions: no class, nothing is added).
BUILTINS: dict[str, dict[str, str | None]] = {
    "attention": {
        "fused": "tx_keras.layers.multi_head.MultiHeadAttention",
        "looped": "tx_keras.layers.looped_multi_head.LoopedMultiHeadAttention",
    },
    "positions": {
        "sinusoidal": "tx_keras.layers.sinusoidal_positions.SinusoidalPositions",
        "learned": "tx_keras.layers.learned_positions.LearnedPositions",
        "rotary": "tx_keras.layers.rotary_positions.RotaryPositions",
        "none": None,
    },
    "ffn": {"dense": "tx_keras.layers.feed_forward.FeedForward"},
    "norm": {"layer_norm": "tx_keras.kernels.layer_norm.LayerNorm"},
}


class ComponentError(ValueError):
    """A component name that is neither built in nor an importable Keras layer class."""


def is_import_path(kind: str, name: str) -> bool:
    """A user's own class ("package.module.ClassName"), which only importing it can check: dotted Python
    names, no relative or empty part (`..` would reach importlib as a relative import and fail there)."""
    parts = name.split(".")
    return name not in BUILTINS[kind] and len(parts) > 1 and all(part.isidentifier() for part in parts)


def resolve(kind: str, name: str) -> type[keras.layers.Layer] | None:
    """The layer class for `name` (a built-in name of `kind`, or "package.module.ClassName")."""
    builtins = BUILTINS[kind]
    path = builtins.get(name, name)
    if path is None:
        return None
    module_name, _, class_name = path.rpartition(".")
    if not is_import_path(kind, path):
        raise ComponentError(
            f"{name!r} is neither a built-in {kind} ({', '.join(builtins)}) nor an import path "
            f"like my_package.my_module.MyLayer"
        )
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ComponentError(f"{kind} {name!r} cannot be imported: {error}") from None
    import keras  # here, not at the top: is_import_path and a misspelt name must not start TensorFlow

    if not (isinstance(found, type) and issubclass(found, keras.layers.Layer)):
        raise ComponentError(f"{kind} {name!r} is not a keras.layers.Layer subclass")
    return found


def position_classes(
    name: str,
) -> tuple[type[keras.layers.Layer] | None, type[keras.layers.Layer] | None]:
    """(the class whose encodings are added to the embeddings, the class that rotates each head's queries and
    keys inside self-attention) for the `positions` name: one of them, or neither ("none").

    The one place the rotary-or-added choice is made: a class that sets `rotates_queries_and_keys = True`
    (RotaryPositions) acts in the attention; any other is added by TokenAndPositionEmbedding.
    """
    found = resolve("positions", name)
    if found is not None and getattr(found, "rotates_queries_and_keys", False):
        return None, found
    return found, None
