"""The model and batch size every benchmarked model shares, so throughputs are comparable."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchSize:
    """One encoder-decoder size: source and target are both `length` tokens, both vocabularies `vocab`."""

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
