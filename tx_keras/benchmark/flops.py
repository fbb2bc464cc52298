"""Model FLOPs counted analytically, and their ratio to a dense matmul peak (MFU; matmul_peak.py measures
the peak). Imports no Keras: the parent of tx-bench's backend workers uses it."""

from __future__ import annotations

from tx_keras.benchmark.size import BenchSize

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
