"""What the encoder and decoder stacks share: embedding, N identical blocks, a final norm in pre-LN."""

from __future__ import annotations

import dataclasses
from operator import attrgetter

import keras

from tx_keras.layers import TokenAndPositionEmbedding
from tx_keras.layers.add_norm import NORM_EPSILON, build_norm
from tx_keras.models.model_config import ModelConfig, split_model_config


class Stack(keras.layers.Layer):
    """Token + position embedding, `num_layers` blocks of `block_class`, a final norm when norm="pre".

    Pre-LN leaves the residual stream un-normalised, so one last norm is needed; post-LN already ends
    on a norm. Subclasses set `block_class` and write `call`. Every knob but the vocabulary, the length
    and the depth comes from `config` (the Transformer gives each stack its own depth).
    """

    block_class: type[keras.layers.Layer]

    def __init__(self, config: ModelConfig, vocab_size: int, max_length: int, num_layers: int, **kwargs):
        super().__init__(**kwargs)
        if num_layers < 1:
            raise ValueError(f"num_layers={num_layers} must be >= 1")
        self.config = config
        self.vocab_size, self.max_length, self.num_layers = vocab_size, max_length, num_layers
        policy = self.dtype_policy
        self._embedding = TokenAndPositionEmbedding(
            vocab_size, config.d_model, max_length, config.positions, name="embedding", dtype=policy
        )
        self._embedding_dropout = keras.layers.Dropout(config.dropout, dtype=policy)
        self._blocks = [
            self.block_class(config, name=f"block_{i + 1}", dtype=policy) for i in range(num_layers)
        ]
        self._final_norm = (
            build_norm(config.norm_impl, NORM_EPSILON, "final_norm", policy) if config.norm == "pre" else None
        )

    d_model = property(attrgetter("config.d_model"))

    @property
    def token_table(self):
        """The stack's (vocab_size, d_model) token embeddings (see Transformer's tie_embeddings)."""
        return self._embedding.token_table

    def _build_stack(self, ids_shape, *block_shapes) -> None:
        self._embedding.build(ids_shape)
        hidden_shape = (*ids_shape, self.d_model)
        for block in self._blocks:
            block.build(hidden_shape, *block_shapes)
        if self._final_norm is not None:
            self._final_norm.build(hidden_shape)
        self.built = True

    def _embed(self, ids, training, start_index=0):
        """`start_index`: the position of ids[:, 0] (a decoding step's new tokens)."""
        return self._embedding_dropout(self._embedding(ids, start_index=start_index), training=training)

    def _run_blocks(self, hidden, return_attention_scores: bool, **block_kwargs):
        """Every block in turn, collecting each block's attention weights and output when asked to."""
        trace: dict[str, list] = {"outputs": []}
        for block in self._blocks:
            hidden = block(hidden, return_attention_scores=return_attention_scores, **block_kwargs)
            if return_attention_scores:
                hidden, weights = hidden
                for name, value in weights.items():
                    trace.setdefault(name, []).append(value)
                trace["outputs"].append(hidden)
        if self._final_norm is not None:
            hidden = self._final_norm(hidden)
        return (hidden, trace) if return_attention_scores else hidden

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "model_config": dataclasses.asdict(self.config),
            "vocab_size": self.vocab_size,
            "max_length": self.max_length,
            "num_layers": self.num_layers,
        }

    @classmethod
    def from_config(cls, config: dict) -> Stack:
        model_config, rest = split_model_config(config)
        return super().from_config({**rest, "config": model_config})
