"""Whether TensorFlow runs its oneDNN kernels: tx-bench reports it, and the training step shapes its
gathers for them (oneDNN compiles a kernel per shape; TensorFlow's Eigen kernels do not)."""

from __future__ import annotations


def onednn_enabled() -> bool | None:
    """Whether TensorFlow runs its oneDNN kernels, which change every model's speed (on the AVX2 EPYC they
    made keras.layers.MultiHeadAttention 1.7x faster and ours 1.2-1.35x). TensorFlow turns them on by
    default only on CPUs with AVX-512 VNNI/BF16, AVX-VNNI or AMX, else off; `TF_ENABLE_ONEDNN_OPTS`
    overrides. None when this TensorFlow cannot say."""
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return None
    return bool(_pywrap_util_port.IsMklEnabled())
