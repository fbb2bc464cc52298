"""What one tx-bench run measures and for how long, in a leaf module: the parent of its backend workers
imports no Keras, and every part of the run reads its choices from one `BenchSettings`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BenchSize:
    """One encoder-decoder size every benchmarked model shares, so throughputs are comparable: source and
    target are both `length` tokens, both vocabularies `vocab`."""

    d_model: int = 128
    encoder_layers: int = 2
    decoder_layers: int = 2
    num_heads: int = 4
    dff: int = 512
    batch: int = 64
    length: int = 32
    vocab: int = 2000

    @property
    def tokens_per_step(self) -> int:
        """Source plus target tokens one training step reads (both sequences are processed)."""
        return 2 * self.batch * self.length


@dataclass(frozen=True)
class Timing:
    """How long to measure: at least `windows` interleaved training windows of `steps` steps after a
    warm-up, then more until every ratio's 95 % interval is within +-`target_half_width` (log scale) or a
    block has run `time_cap_s` seconds of windows; decoding repeats; peak matmul n; decoding lengths."""

    windows: int = 8
    steps: int = 10
    warmup: int = 3
    repeats: int = 9
    matmul_size: int = 2048
    outputs: tuple[int, ...] = (32, 64)
    target_half_width: float = 0.03
    time_cap_s: float = 240.0


@dataclass(frozen=True)
class RealPathSize:
    """How much of the real path to generate (real_path.py): pairs of the corpus, its vocabulary (per
    side, specials included), and, for a quick smoke run, model overrides that shrink the preset (empty =
    the preset as shipped)."""

    pairs: int = 3000
    vocab: int = 8004
    model: tuple[tuple[str, int], ...] = ()
    batch_tokens: int | None = None  # None = the preset's trainer.batch_tokens


@dataclass(frozen=True)
class BenchSettings:
    """One run's choices, passed down whole. `precisions` None: those this machine multiplies natively;
    `jit_compile` as trainer.jit_compile (`auto`: XLA with a GPU); `every_position` adds ours trained on
    every position (the peers' work) to the blocks and races it on the real path; `real_path` None skips
    the real path; `row_parts` races the real path against TensorFlow's default thread pools."""

    size: BenchSize = field(default_factory=BenchSize)
    timing: Timing = field(default_factory=Timing)
    precisions: tuple[str, ...] | None = None
    jit_compile: bool | str = "auto"
    fused_qkv: bool = False
    every_position: bool = False
    real_path: RealPathSize | None = None
    saved_model: bool = True
    row_parts: bool = False


# `--quick`: a size that runs in seconds, for tests and a quick look; its numbers say nothing about speed.
QUICK_SIZE = BenchSize(
    d_model=32, encoder_layers=1, decoder_layers=1, num_heads=2, dff=64, batch=8, length=8, vocab=50
)
QUICK_TIMING = Timing(
    windows=4, steps=2, warmup=1, repeats=2, matmul_size=512, outputs=(4, 8), time_cap_s=1.0
)
QUICK_REAL_PATH = RealPathSize(
    pairs=120,
    vocab=60,
    model=(
        ("d_model", 16),
        ("num_heads", 2),
        ("dff", 32),
        ("num_encoder_layers", 1),
        ("num_decoder_layers", 1),
    ),
    batch_tokens=128,
)
