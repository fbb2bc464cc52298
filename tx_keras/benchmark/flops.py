"""Model FLOPs counted analytically, this machine's dense matmul peak per dtype, and their ratio (MFU)."""

from __future__ import annotations

import time

import tensorflow as tf

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


def matmul_peak(dtype: str = "float32", n: int = 2048, repeats: int = 5) -> float:
    """Best FLOP/s of (n x n) @ (n x n) matmuls whose inputs are `dtype` (a bfloat16 peak needs bfloat16
    operands, not float32 ones cast inside), in a compiled graph: the ceiling a model can reach.

    Measured two ways and the better one counts: one chain of dependent products (each matmul uses every
    core) and two independent chains (TensorFlow also runs independent ops side by side, as it does a
    model's step; on the 2-core AVX2 EPYC that was 5-10 % faster). A ceiling set too low would flatter
    every MFU."""
    a = tf.cast(tf.random.normal((n, n), dtype=tf.float32), dtype)
    b = tf.cast(tf.random.normal((n, n), dtype=tf.float32), dtype)
    scale = tf.cast(1e-3, dtype)  # keeps values finite; O(n^2) next to O(n^3)

    @tf.function
    def one_chain(x):
        for _ in range(4):
            x = tf.matmul(x, a) * scale
        return x

    @tf.function
    def two_chains(x):
        y = x
        for _ in range(4):
            x, y = tf.matmul(x, a) * scale, tf.matmul(y, b) * scale
        return x + y

    best = 0.0
    for chain, products in ((one_chain, 4), (two_chains, 8)):
        chain(a).numpy()  # trace and warm up
        for _ in range(repeats):
            started = time.perf_counter()
            chain(a).numpy()
            best = max(best, products * 2 * n**3 / (time.perf_counter() - started))
    return best


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
