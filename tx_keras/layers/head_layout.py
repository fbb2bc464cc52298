"""Keras' multi-head weight layout, shared by the fused and the aligned forms: (d_in, h, d_k) projection
kernels with (h, d_k) biases, an (h, d_k, d_model) output kernel with a (d_model,) bias, and the two
contractions that use them."""

from __future__ import annotations

import keras
from keras import ops

from tx_keras.kernels import project_rows
from tx_keras.layers.multi_head_base import MultiHeadBase


class HeadLayout(MultiHeadBase):
    """The projections of a form whose weights are laid out as `keras.layers.MultiHeadAttention`'s, written
    once so that every such form computes them the same way: as 2-D matmuls of flattened rows through
    `project_rows` (oneDNN fuses the bias; the bias gradient is summed in float32 under bf16), not as
    einsums plus a broadcast bias. A subclass creates the `{name}_kernel`/`{name}_bias` weights it uses
    and `output_kernel`/`output_bias`."""

    @property
    def output_weight(self) -> keras.Variable:
        """The (h, d_k, d_model) output kernel: head i's rows are `output_kernel[i]`."""
        return self.output_kernel

    def _flat_kernel(self, name: str):
        """A (d_in, h, d_k) kernel viewed as the (d_in, h * d_k) matrix of one plain matmul."""
        return ops.reshape(getattr(self, f"{name}_kernel"), (-1, self.num_heads * self.key_dim))

    def _split_heads(self, rows, inputs, heads: int):
        """(B * T, heads * d_k) rows of the (B, T, d_in) `inputs` -> (B, heads, T, d_k)."""
        shape = ops.shape(inputs)
        return ops.transpose(ops.reshape(rows, (shape[0], shape[1], heads, self.key_dim)), (0, 2, 1, 3))

    def _bias(self, name: str):
        """A (h, d_k) bias viewed as the (h * d_k,) vector of the flat projection, or None."""
        return ops.reshape(getattr(self, f"{name}_bias"), (-1,)) if self.use_bias else None

    def _project_one(self, name: str, inputs):
        """(B, T, d_in) -> (B, h, T, d_k): every head's projection in one matmul.

        Written as a 2-D matmul of the flattened rows plus the bias (`project_rows`), then split into
        heads, rather than as the einsum `btd,dhk->bhtk`: same weights and numbers, but TensorFlow's Einsum
        kernel and its gradients ran at about half the FLOP rate of MatMul on a CPU
        (docs/decisions/projections-2d.md), and
        oneDNN fuses the bias add into a 2-D MatMul.
        """
        rows = project_rows(inputs, self._flat_kernel(name), self._bias(name))
        return self._split_heads(rows, inputs, self.num_heads)

    def _combine(self, heads):
        """Concatenating the (B, h, T, d_k) heads and multiplying by W_o is one contraction over (head,
        d_k): a matmul of the (B * T, h * d_k) concatenated rows by W_o viewed as (h * d_k, d_model)."""
        shape = ops.shape(heads)
        concatenated = ops.transpose(heads, (0, 2, 1, 3))
        bias = self.output_bias if self.use_bias else None
        rows = project_rows(concatenated, ops.reshape(self.output_kernel, (-1, self.d_model)), bias)
        return ops.reshape(rows, (shape[0], shape[2], self.d_model))
