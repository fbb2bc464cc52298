"""Built-in Keras layers computed the way the CPU runs them fastest, with the same weights, config and
function: the lecture's blocks (tx_keras/layers) use them as they would Keras' own, so that a block's file
carries the idea and a kernel's file the speed (and the measurements that justify it)."""

from tx_keras.kernels.dense import Dense, project_rows
from tx_keras.kernels.layer_norm import LayerNorm

__all__ = ["Dense", "LayerNorm", "project_rows"]
