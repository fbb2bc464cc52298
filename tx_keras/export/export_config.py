"""The `export` config group's keys as a dataclass: what the end of a run writes to RUN_DIR/export/.

Hydra validates conf/export/*.yaml against it (conf/__init__.py registers it as `schema/export`), so an
unknown key or a wrong type fails while the config is composed; the value rules are
tx_keras/config_check.py's. Imports nothing heavy: the config tree imports it before TensorFlow starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExportConfig:
    """The SavedModel and model.keras written at the end of a completed run (docs/serving.md)."""

    enabled: bool = True  # export at the end of a completed tx-train run; false = only tx-export
    beam_width: int = 4  # hypotheses kept while decoding; 1 = greedy
    length_penalty: float | int | str = 0.6  # GNMT alpha >= 0, or auto (chosen on validation, real text only)
    length_penalty_grid: list[float] = field(default_factory=lambda: [0.6, 1.0, 1.4])  # auto's alphas
    attention: str = "mean"  # translate_with_attention's cross-attention: mean | heads
