"""`trainer.deterministic`: the same config gives bit-identical losses and weights on one machine.

TensorFlow picks some kernels (and their reduction orders) at run time: its op determinism pins them.
JAX has no such switch to flip at run time: XLA on a CPU is deterministic as it is, and on a GPU its
`--xla_gpu_deterministic_ops` flag must be in XLA_FLAGS before JAX starts its backends, which
`jax_flags` gives tx-train to set before Keras's first import.
"""

from __future__ import annotations

JAX_DETERMINISTIC_FLAG = "--xla_gpu_deterministic_ops=true"


def jax_flags(xla_flags: str, deterministic: bool) -> str:
    """XLA_FLAGS for a JAX run: `xla_flags` with the deterministic-GPU flag added when asked for."""
    if not deterministic or JAX_DETERMINISTIC_FLAG in xla_flags.split():
        return xla_flags
    return f"{xla_flags} {JAX_DETERMINISTIC_FLAG}".strip()


def make_deterministic() -> None:
    """Pin the backend's kernel choices for this run (TensorFlow); on JAX the flag is already set."""
    import keras  # not at the top: tx-train imports this module before Keras's backend is chosen

    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
