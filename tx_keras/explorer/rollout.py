"""Attention rollout (Abnar & Zuidema 2020, arXiv 2005.00928) for an encoder-decoder.

One layer's weights say where that layer looked, not where the information a token carries came from:
each block adds its attention output to the residual stream, so the paper models a layer as
0.5·A + 0.5·I (A averaged over heads, rows renormalised) and multiplies the layers. For the decoder the
same holds for its self-attention; its cross-attention mixes in the encoder's rolled-out source tokens
(0.5 kept, 0.5 read from the source), so the product says which *source words* each output word draws
on across every layer.
"""

from __future__ import annotations

import numpy as np


def residual_attention(weights: np.ndarray) -> np.ndarray:
    """(heads, Tq, Tk) weights of one self-attention layer -> the paper's 0.5·mean(A) + 0.5·I, rows
    summing to 1."""
    mean = np.asarray(weights, np.float64).mean(axis=0)
    mixed = 0.5 * mean + 0.5 * np.eye(*mean.shape)
    return mixed / mixed.sum(axis=-1, keepdims=True)


def self_rollout(layers: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) self-attention -> (T, T): row i = how much token i at the top draws on
    each input token, rows summing to 1."""
    rolled = np.eye(np.shape(layers)[-1])
    for layer in layers:
        rolled = residual_attention(layer) @ rolled
    return rolled


def cross_rollout(encoder_self: np.ndarray, decoder_self: np.ndarray, cross: np.ndarray) -> tuple:
    """Which source tokens each decoder position draws on, through every layer of both stacks.

    Args: (layers, heads, Ts, Ts), (layers, heads, Tt, Tt), (layers, heads, Tt, Ts) weights.
    Returns (source (Tt, Ts) with rows summing to 1, share (Tt,)): `share` is how much of a position's
    rolled-out mixture comes from the source at all; the rest is the decoder's own inputs.

    A decoder block is self-attention then cross-attention: the self step mixes decoder positions
    (0.5·A + 0.5·I); the cross step keeps half the stream and reads half from the rolled-out encoder
    (0.5·I on the decoder side, 0.5·A_cross·R_enc on the source side), as the rollout's residual does.
    """
    encoder = self_rollout(encoder_self)
    target_length = np.shape(decoder_self)[-1]
    own = np.eye(target_length)  # decoder position -> decoder inputs
    source = np.zeros((target_length, np.shape(cross)[-1]))  # decoder position -> source tokens
    for self_layer, cross_layer in zip(decoder_self, cross, strict=True):
        mix = residual_attention(self_layer)
        own, source = mix @ own, mix @ source
        read = np.asarray(cross_layer, np.float64).mean(axis=0)
        read = read / np.maximum(read.sum(axis=-1, keepdims=True), 1e-12)
        own, source = 0.5 * own, 0.5 * source + 0.5 * read @ encoder
    share = source.sum(axis=-1)
    return source / np.maximum(share[:, None], 1e-12), share
