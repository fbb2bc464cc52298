"""Keras callbacks that turn a run into a TensorBoard dashboard.

The names below are imported on first use (PEP 562): importing one callback module of the package (the
early stopper, the checkpoints) does not import the tf.summary image writers, which a run without
TensorFlow cannot import.
"""

from tx_keras.lazy_names import lazy_names

__getattr__, __all__ = lazy_names(
    __name__,
    attention_maps=("AttentionMaps",),
    diagnostics=("Diagnostics",),
    probes=("Probes",),
    text_samples=("TextSamples",),
)
