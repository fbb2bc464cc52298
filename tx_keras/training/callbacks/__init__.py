"""Keras callbacks that turn a run into a TensorBoard dashboard."""

from tx_keras.training.callbacks.attention_maps import AttentionMaps
from tx_keras.training.callbacks.diagnostics import Diagnostics
from tx_keras.training.callbacks.probes import Probes
from tx_keras.training.callbacks.text_samples import TextSamples

__all__ = ["AttentionMaps", "Diagnostics", "Probes", "TextSamples"]
