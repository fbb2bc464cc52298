"""Training steps on the real positions only: padding rows skip the FFN sublayers, the vocabulary
projection and the loss.

The projection to the target vocabulary and the softmax cross-entropy after it are the widest layers of a
step (d_model x V per position: its forward and two backward matmuls are an eighth of the op time of
tx-bench's float32 step on the Zen 4 EPYC, before the softmax), and every padding position pays for them
only to be masked out of the loss. During a training step the Transformer gathers
the decoder states where the decoder input is a real token, projects those rows alone and returns their
logits as a (real positions, V) tensor; the loss and the metrics gather the labels at the same positions.
With teacher forcing each label follows a real decoder-input token (`[SOS w1 .. wn]` predicts
`[w1 .. wn EOS]`), so every labelled position is kept: the same token-mean loss, the same gradients, the
same accuracy, up to the summation order.

The FFN sublayers (with their Add + Norm) work position by position and are the largest share of the
encoder's and decoder's work (2 x d_model x dff multiply-adds a position against attention's 4 x d_model^2
for its projections): in such a step each runs on the gathered real rows and scatters its result back,
leaving the other padding rows as they came in. Nothing reads a padding row's state: attention masks
padding positions as keys, and the logits leave them out.

Under oneDNN each gather takes a few padding positions too, so that its row count is a multiple of
`ROW_CLASS`: a row count seen before reuses oneDNN's kernels for its shapes, where a new one builds them
(below). Those rows change nothing either: a padding position's label is 0, which the loss and metrics
skip, and its gradient is zero.

That equality needs a loss and metrics that score labels != 0 only, as tx_keras's do: each says so with
a class attribute `ignores_padding = True`. A model compiled with anything else (Keras'
SparseCategoricalCrossentropy averages over padding labels too, say) keeps (B, T, V) logits and the
objective it asked for. And it needs a step whose shapes may vary: TensorFlow without XLA (a graph takes
the gathered row count as it comes; XLA and JAX compile fixed shapes), without per-sample weights.
Elsewhere, and outside training steps (evaluation, prediction, decoding, export), the model returns
(B, T, V) logits as always. The switch is per thread, so MirroredStrategy's replica threads each set
their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import keras
from keras import ops

from tx_keras.runtime.onednn import onednn_enabled

_step = threading.local()  # `active`: inside a training step that may leave padding positions out


@contextlib.contextmanager
def gathered_logits(enabled: bool) -> Iterator[None]:
    """Within this block the Transformer's training-mode calls run their FFN sublayers on the real rows and
    return logits at the real target positions only."""
    before = getattr(_step, "active", False)
    _step.active = enabled
    try:
        yield
    finally:
        _step.active = before


def gathering(training) -> bool:
    """Whether a call with `training` belongs to a training step that leaves padding positions out."""
    return bool(training) and getattr(_step, "active", False)


def ignores_padding(loss, metrics, weighted_metrics) -> bool:
    """Whether `compile`'s loss and every metric score labels != 0 only, so that leaving the padding
    positions out changes none of them."""
    scored = [loss, *(metrics or ())]
    return not weighted_metrics and all(getattr(part, "ignores_padding", False) for part in scored)


def can_gather(model: keras.Model, sample_weight) -> bool:
    """A padding-blind objective (`ignores_padding`, noted by the model's `compile`), TensorFlow outside
    XLA (dynamic row counts), and no per-sample weights to gather alongside."""
    return (
        model.objective_ignores_padding
        and keras.backend.backend() == "tensorflow"
        and not model.jit_compile
        and sample_weight is None
    )


# Where TensorFlow runs oneDNN's kernels, gathered row counts are rounded up to a multiple of this
# (padding positions fill the rest). oneDNN builds a kernel for every new matmul shape (~1.4 ms each,
# on one thread, measured on an AMX Xeon): with exact counts nearly every step brought new ones, and
# building them took ~13 % of an epoch. 64 rows bound the counts a run sees to batch_tokens / 64.
# TensorFlow's Eigen kernels build nothing per shape: there the padding rows only cost (~5 %).
ROW_CLASS = 64


def row_class() -> int:
    """The multiple gathered row counts are rounded up to: `ROW_CLASS` under oneDNN, else 1."""
    return ROW_CLASS if onednn_enabled() is not False else 1


def flat_index(real):
    """Flat indices (N',) of the True positions of a (B, T) mask, followed by as many False positions
    as round their count up to a multiple of `row_class()` (all positions if there are fewer)."""
    flat = ops.reshape(real, (-1,))
    kept = ops.nonzero(flat)[0]
    multiple = row_class()
    if multiple == 1:
        return kept
    rows = ops.minimum(-(-ops.shape(kept)[0] // multiple) * multiple, ops.shape(flat)[0])
    padding = ops.nonzero(ops.logical_not(flat))[0]
    return ops.concatenate([kept, padding], axis=0)[:rows]


def at_real_positions(values, decoder_input):
    """Rows of `values` (B, T, ...) at the decoder input's real positions (padded up to a row class,
    `flat_index`): (N', ...)."""
    flat = ops.reshape(values, (-1, *ops.shape(values)[2:]))
    return ops.take(flat, flat_index(ops.not_equal(decoder_input, 0)), axis=0)


def on_real_rows(sublayer, values, real):
    """`sublayer(values)` for a position-wise sublayer, computed on the rows (B, T) `real` marks; the
    others keep `values` (no query reads a padding position's state: attention masks them as keys, and
    the logits leave them out)."""
    flat = ops.reshape(values, (-1, ops.shape(values)[-1]))
    index = flat_index(real)
    rows = sublayer(ops.take(flat, index, axis=0))
    return ops.reshape(ops.scatter_update(flat, index[:, None], rows), ops.shape(values))
