"""Model FLOPs counted analytically, and their ratio to a dense matmul peak (MFU; matmul_peak.py measures
the peak). Imports no Keras: the parent of tx-bench's backend workers uses it."""

from __future__ import annotations

from tx_keras.benchmark.settings import BenchSize

# The dtype a precision policy's matmuls run in: its peak is the ceiling that policy can reach.
MATMUL_DTYPES = {"float32": "float32", "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}


def forward_flops(size: BenchSize) -> int:
    """Matmul FLOPs (2 per multiply-add) of one forward pass of the encoder-decoder at `size`.

    Counts what dominates: the q/k/v/o projections, the scores and weighted sums, the FFN and the
    vocabulary projection, over every position the step computes (padding included: the hardware does
    that work too). Softmax, LayerNorm, embeddings and biases are O(T d) and left out, as in the usual
    MFU accounting (Kaplan et al. 2020; PaLM appendix B).
    """
    b, t, d, f, v = size.batch, size.length, size.d_model, size.dff, size.vocab
    projections = 2 * 4 * d * d  # q, k, v, o per token
    attention = 2 * 2 * t * d  # q k^T and weights @ v per query, all heads together
    ffn = 2 * 2 * d * f
    encoder = size.encoder_layers * b * t * (projections + attention + ffn)
    # Cross-attention: q and o on the target, k and v on the source; scores against t source keys.
    decoder = size.decoder_layers * b * t * (2 * projections + 2 * attention + ffn)
    logits = b * t * 2 * d * v
    return encoder + decoder + logits


def real_forward_flops(size: BenchSize, source_lengths, target_lengths) -> int:
    """Matmul FLOPs of one forward pass counting only real tokens: the useful work of a padded batch.

    `source_lengths[i]` is row i's real source words, `target_lengths[i]` its decoder positions that
    carry a label (throughput.real_tokens counts the same). Per-token products (projections, FFN,
    vocabulary) count real tokens; attention counts real queries x real keys of the row (the decoder's
    self-attention its labelled positions both ways, as `forward_flops` counts every position both
    ways); cross-attention's key/value projections run on the real source words. With no padding it
    equals `forward_flops` (a test checks), so the two MFUs differ only by what padding costs.
    """
    d, f = size.d_model, size.dff
    projection, ffn = 2 * d * d, 2 * 2 * d * f  # per token: one d x d projection, the FFN's two
    total = 0
    for s, t in zip(source_lengths, target_lengths, strict=True):
        s, t = int(s), int(t)
        encoder = s * (4 * projection + ffn) + 2 * 2 * s * s * d
        self_attention = t * 4 * projection + 2 * 2 * t * t * d
        cross_attention = (t + s) * 2 * projection + 2 * 2 * t * s * d  # q, o on t; k, v on s
        decoder = self_attention + cross_attention + t * ffn
        total += size.encoder_layers * encoder + size.decoder_layers * decoder + t * 2 * d * size.vocab
    return total


def real_training_flops(size: BenchSize, source, labels) -> int:
    """A training step's FLOPs on a batch's real tokens only (3 x the forward pass, as training_flops):
    `source` and `labels` are (batch, length) id arrays, 0 for padding."""
    return 3 * real_forward_flops(size, (source != 0).sum(axis=1), (labels != 0).sum(axis=1))


def training_flops(size: BenchSize) -> int:
    """A training step is a forward pass plus a backward pass of twice its cost."""
    return 3 * forward_flops(size)


class PeakExceeded(RuntimeError):
    """A model ran faster than the measured matmul peak: the peak measurement was disturbed."""


def utilisation(flops_per_s: float, peak_flops_per_s: float) -> float:
    """MFU: achieved FLOP/s over the peak of the dtype the matmuls run in; a share, so never above 1."""
    if peak_flops_per_s <= 0:
        raise ValueError(f"peak {peak_flops_per_s} FLOP/s must be positive")
    mfu = flops_per_s / peak_flops_per_s
    if mfu > 1:
        raise PeakExceeded(
            f"{flops_per_s / 1e9:.1f} GFLOP/s exceed the measured peak {peak_flops_per_s / 1e9:.1f} GFLOP/s"
        )
    return mfu
