"""Every knob of the Transformer in one frozen dataclass: its type, its default and what it does.

The model, its stacks and its blocks all take this one object (nanoGPT's GPTConfig pattern) instead of a
dozen plumbed arguments, and Hydra validates the `model` config group against it (conf/__init__.py
registers it as `schema/model`), so a YAML preset only states what it changes and a typo or a wrong type
fails before anything is built. The defaults are the `small` preset. Imports nothing heavy: the config
tree imports it before TensorFlow starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# `attention`: attention by content, or the ablation where each position reads only itself.
ATTENTION_KINDS = ("full", "none")


@dataclass(frozen=True)
class ModelConfig:
    """The model's knobs; the sizes are the model, everything else switches a part on, off or to another form.

    The `*_impl` fields and `positions` name a built-in (listed) or a user's own layer class by import path,
    "package.module.ClassName" (tx_keras/components.py; contracts in docs/configuring.md).
    """

    num_encoder_layers: int = 2  # encoder blocks (self-attention + FFN)
    num_decoder_layers: int = 2  # decoder blocks (causal self-attention + cross-attention + FFN)
    d_model: int = 64  # width of every token vector; must be divisible by num_heads
    num_heads: int = 4  # attention heads h; each head has d_model / h features
    dff: int = 256  # hidden width of the feed-forward network
    dropout: float = 0.0  # dropout on attention weights, FFN hidden units, sublayer outputs, embeddings
    residual: bool = True  # the Add of Add + Norm: residual connections on/off
    norm: str = "post"  # norm placement: post (the paper) | pre | none (tx_keras/norm_placement.py)
    ffn: bool = True  # feed-forward sublayers on/off
    activation: str = "relu"  # FFN hidden activation: relu | gelu | silu | tanh
    attention: str = "full"  # full (attention by content) | none (each position reads only itself)
    attention_impl: str = "fused"  # fused (all heads at once) | looped (one head at a time) | import path
    positions: str = "sinusoidal"  # sinusoidal | learned | none | rotary (rotates q, k) | import path
    fused_qkv: bool = True  # one matmul for q/k/v (k/v when crossing); same outputs; used by the fused form
    tie_embeddings: bool = False  # output projection = the decoder's token embeddings (Press & Wolf 2017)
    ffn_impl: str = "dense"  # feed-forward network: dense (Dense-activation-Dense) | import path
    norm_impl: str = (
        "layer_norm"  # the norm of Add + Norm and the final pre-LN norm: layer_norm | import path
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
