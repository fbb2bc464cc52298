"""Measures that make the lecture's claims visible: rank collapse, attention entropy, gradient norms."""

from tx_keras.diagnostics.attention_entropy import attention_entropy
from tx_keras.diagnostics.gradient_norms import gradient_norms_by_layer, layer_of
from tx_keras.diagnostics.rank_collapse import rank_collapse_ratio

__all__ = ["attention_entropy", "gradient_norms_by_layer", "layer_of", "rank_collapse_ratio"]
