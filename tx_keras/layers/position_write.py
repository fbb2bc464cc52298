"""The one way the suite writes values at a position: a decoding cache's new keys and values (the attention
layers), the word chosen at a step and the attention row of that word (tx_keras/decoding)."""

from __future__ import annotations

from keras import ops


def write_at(tensor, index, update, axis: int):
    """`tensor` with `update` written along `axis` from `index` on (from 0 on every other axis).

    `index` may be a tensor (the position inside a compiled decoding loop): `ops.slice_update` keeps every
    shape fixed, so the loop is traced once, and copies only the slot instead of adding a one-hot mask
    over the whole tensor. `update` has `tensor`'s dtype and rank.
    """
    start = [0] * len(tensor.shape)
    start[axis] = index
    return ops.slice_update(tensor, start, update)
