"""Every knob of the Transformer in one frozen dataclass: its type, its default and what it does.

The model, its stacks and its blocks all take this one object (nanoGPT's GPTConfig pattern) instead of a
dozen plumbed arguments, and Hydra validates the `model` config group against it (conf/__init__.py
registers it as `schema/model`), so a YAML preset only states what it changes and a typo or a wrong type
fails before anything is built. Each knob's range or choices are on its field, and the rule between knobs
(heads divide the width) in `__post_init__`: building one is checking it (tx_keras/config_rules.py). The
defaults are the `small` preset. Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tx_keras.components import BUILTINS, ComponentError, is_import_path, resolve
from tx_keras.config_rules import Rule, between, check_rules, fraction, one_of, ruled
from tx_keras.norm_placement import NORM_MODES
from tx_keras.user_error import ConfigError

# `attention`: attention by content, or the ablation where each position reads only itself.
ATTENTION_KINDS = ("full", "none")
# The knobs that name a component (a built-in or a user's import path): knob -> its kind in BUILTINS.
COMPONENT_KINDS = {
    "attention_impl": "attention",
    "positions": "positions",
    "ffn_impl": "ffn",
    "norm_impl": "norm",
}


def component(kind: str) -> Rule:
    """A built-in name, or a user's import path (imported only by the config check's `check_components`);
    anything else is a typo, refused without importing anything."""

    def problem(name: str) -> str | None:
        if name in BUILTINS[kind] or is_import_path(kind, name):
            return None
        try:
            resolve(kind, name)  # neither: raises its one line without importing anything
        except ComponentError as error:
            return f"is not allowed; {error}"
        return None

    return problem


@dataclass(frozen=True)
class ModelConfig:
    """The model's knobs; the sizes are the model, everything else switches a part on, off or to another form.

    The `*_impl` fields and `positions` name a built-in (listed) or a user's own layer class by import path,
    "package.module.ClassName" (tx_keras/components.py; contracts in docs/configuring.md).
    """

    num_encoder_layers: int = ruled(2, between(1, 1000))  # encoder blocks (self-attention + FFN)
    # decoder blocks (causal self-attn + cross-attn + FFN)
    num_decoder_layers: int = ruled(2, between(1, 1000))
    d_model: int = ruled(64, between(1, 2**16))  # width of every token vector; must be divisible by num_heads
    num_heads: int = ruled(4, between(1, 1024))  # attention heads h; each head has d_model / h features
    dff: int = ruled(256, between(1, 2**18))  # hidden width of the feed-forward network
    # dropout on attention weights, FFN hidden units, sublayer outputs, embeddings
    dropout: float = ruled(0.0, fraction)
    residual: bool = True  # the Add of Add + Norm: residual connections on/off
    norm: str = ruled("post", one_of(*NORM_MODES))  # norm placement: post (the paper) | pre | none
    ffn: bool = True  # feed-forward sublayers on/off
    activation: str = ruled("relu", one_of("relu", "gelu", "silu", "tanh"))  # FFN hidden activation
    attention: str = ruled("full", one_of(*ATTENTION_KINDS))  # full (by content) | none (reads only itself)
    # fused (all heads at once) | looped (one head at a time) | import path
    attention_impl: str = ruled("fused", component(COMPONENT_KINDS["attention_impl"]))
    # sinusoidal | learned | none | rotary (rotates q, k) | import path
    positions: str = ruled("sinusoidal", component(COMPONENT_KINDS["positions"]))
    fused_qkv: bool = True  # one matmul for q/k/v (k/v when crossing); same outputs; used by the fused form
    tie_embeddings: bool = False  # output projection = the decoder's token embeddings (Press & Wolf 2017)
    # the feed-forward network: dense (Dense-activation-Dense) | import path
    ffn_impl: str = ruled("dense", component(COMPONENT_KINDS["ffn_impl"]))
    # the norm of Add + Norm and the final pre-LN norm: layer_norm | import path
    norm_impl: str = ruled("layer_norm", component(COMPONENT_KINDS["norm_impl"]))

    def __post_init__(self) -> None:
        check_rules(self, "model")
        if self.d_model % self.num_heads:
            divisors = [h for h in range(1, self.d_model + 1) if self.d_model % h == 0 and h <= 64]
            raise ConfigError(
                f"model.num_heads={self.num_heads} does not divide model.d_model={self.d_model}; "
                f"choose num_heads in {', '.join(map(str, divisors))}"
            )

    @property
    def key_dim(self) -> int:
        """Features per head d_k = d_model / num_heads, derived here once for the model, the decoders' caches
        and the config check (an attention layer built on its own derives its own from its arguments)."""
        return self.d_model // self.num_heads


FIELDS = tuple(field.name for field in dataclasses.fields(ModelConfig))


def split_model_config(config: Mapping[str, Any], key: str = "model_config") -> tuple[ModelConfig, dict]:
    """(ModelConfig, the other keys) from a layer's serialized config: `key` holds the knobs, or, in
    configs written before ModelConfig existed, they are flat keys beside the others (missing ones
    take their defaults)."""
    rest = dict(config)
    knobs = rest.pop(key) if key in rest else {name: rest.pop(name) for name in FIELDS if name in rest}
    return ModelConfig(**knobs), rest
