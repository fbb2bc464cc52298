"""The full sequence-to-sequence Transformer: encoder, decoder and the projection to target-word logits."""

from __future__ import annotations

import dataclasses
import inspect
from operator import attrgetter

import keras
from keras import ops

from tx_keras.kernels import Dense, project_rows
from tx_keras.models.decoder import Decoder
from tx_keras.models.encoder import Encoder
from tx_keras.models.model_config import ModelConfig, split_model_config
from tx_keras.models.real_positions import (
    at_real_positions,
    can_gather,
    gathered_logits,
    gathering,
    ignores_padding,
)
from tx_keras.models.row_parts_step import row_parts, step_in_parts


@keras.saving.register_keras_serializable(package="tx_keras")
class Transformer(keras.Model):
    """Encoder + decoder + Dense to the target vocabulary; every knob is a field of `config`.

    Call with `(source_ids, decoder_input_ids)` (both int, id 0 = padding) -> logits (B, Tt, V_target).
    With `return_attention_scores=True` also returns a dict of every attention map (see `trace`), keyed
    `encoder_self/layer_i` (B, h, Ts, Ts), `decoder_self/layer_i` (B, h, Tt, Tt),
    `cross/layer_i` (B, h, Tt, Ts).

    Args:
        config: the model's knobs (`ModelConfig`, the `model` config group): depths, widths, dropout,
            Add + Norm, FFN, attention and position forms, fused q/k/v, tied embeddings, components.
            With `tie_embeddings` the logits are the decoder states times the decoder's own token
            embeddings (plus a bias) instead of a separate Dense: one matrix for a word in and out
            (Press & Wolf 2017), so a rare word's output row learns from its input uses too.
        source_vocab_size, target_vocab_size: vocabulary sizes (id 0 = padding): the task's, not the model's.
        max_source_length, max_target_length: longest sequences (position tables).
    """

    def __init__(
        self,
        config: ModelConfig,
        source_vocab_size: int,
        target_vocab_size: int,
        max_source_length: int,
        max_target_length: int,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.config = config
        self.source_vocab_size, self.target_vocab_size = source_vocab_size, target_vocab_size
        self.max_source_length, self.max_target_length = max_source_length, max_target_length
        policy = self.dtype_policy
        self.encoder = Encoder(
            config,
            source_vocab_size,
            max_source_length,
            config.num_encoder_layers,
            name="encoder",
            dtype=policy,
        )
        self.decoder = Decoder(
            config,
            target_vocab_size,
            max_target_length,
            config.num_decoder_layers,
            name="decoder",
            dtype=policy,
        )
        # The projection is a third of a step's FLOPs at an 8k vocabulary: it runs in the compute dtype
        # (bfloat16 under mixed precision), and `logits` casts its output to float32 for the softmax and
        # loss, as Keras' mixed-precision guide places the float32 boundary at the softmax.
        self.projection = (
            None if config.tie_embeddings else Dense(target_vocab_size, name="logits", dtype=policy)
        )

    objective_ignores_padding = False  # `compile` sets it: loss and metrics skip label 0 (real_positions.py)
    step_parts: int | None = None  # a step's batch rows in this many parts; None = as TensorFlow's thread
    # pools allow (row_parts_step.py); a training setting like jit_compile, not saved with the model

    # The knobs the decoders, the export and the schedule read from a model.
    d_model = property(attrgetter("config.d_model"))
    num_heads = property(attrgetter("config.num_heads"))
    num_encoder_layers = property(attrgetter("config.num_encoder_layers"))
    num_decoder_layers = property(attrgetter("config.num_decoder_layers"))

    def build(self, input_shape):
        source_shape, target_shape = (tuple(shape) for shape in input_shape)
        self.encoder.build(source_shape)
        self.decoder.build(target_shape, (*source_shape, self.d_model))
        if self.projection is None:
            self.logits_bias = self.add_weight(
                shape=(self.target_vocab_size,), initializer="zeros", name="logits_bias"
            )
        else:
            self.projection.build((*target_shape, self.d_model))
        self.built = True

    def logits(self, hidden):
        """Target-vocabulary logits (float32) from decoder states (B, T, d_model)."""
        if self.projection is None:
            table = ops.cast(self.decoder.token_table, hidden.dtype)
            rows = project_rows(hidden, ops.transpose(table), ops.cast(self.logits_bias, hidden.dtype))
            return ops.cast(ops.reshape(rows, (*ops.shape(hidden)[:-1], self.target_vocab_size)), "float32")
        return ops.cast(self.projection(hidden), "float32")

    def encode(self, source_ids, training=None):
        """Encoder output (B, Ts, d_model): computed once per sentence, reused at every decoding step."""
        return self.encoder(source_ids, training=training)

    def decode(self, target_ids, memory, source_ids, training=None):
        """Next-word logits (B, Tt, V) for every target position, given the encoder output; in a training
        step that allows it, (N, V) at the N real target positions only (real_positions.py)."""
        hidden = self.decoder(target_ids, memory, source_mask=ops.not_equal(source_ids, 0), training=training)
        if gathering(training):
            return self.logits(at_real_positions(hidden, target_ids))
        return self.logits(hidden)

    def trace(self, inputs, training=False):
        """Logits plus what the dashboard looks at: every attention map and every block's output.

        Returns (logits, attention, outputs): attention keyed `encoder_self/layer_i`, `decoder_self/layer_i`,
        `cross/layer_i`; outputs keyed `encoder/layer_i`, `decoder/layer_i` (B, T, d_model).
        """
        source_ids, target_ids = inputs
        memory, encoder = self.encoder(source_ids, training=training, return_attention_scores=True)
        hidden, decoder = self.decoder(
            target_ids,
            memory,
            source_mask=ops.not_equal(source_ids, 0),
            training=training,
            return_attention_scores=True,
        )
        attention, outputs = {}, {}
        for name, values in (
            ("encoder_self", encoder["self_attention"]),
            ("decoder_self", decoder["self_attention"]),
            ("cross", decoder["cross_attention"]),
        ):
            attention.update({f"{name}/layer_{i + 1}": value for i, value in enumerate(values)})
        for name, values in (("encoder", encoder["outputs"]), ("decoder", decoder["outputs"])):
            outputs.update({f"{name}/layer_{i + 1}": value for i, value in enumerate(values)})
        return self.logits(hidden), attention, outputs

    def call(self, inputs, training=None, return_attention_scores=False):
        if return_attention_scores:
            logits, attention, _ = self.trace(inputs, training)
            return logits, attention
        source_ids, target_ids = inputs
        return self.decode(target_ids, self.encode(source_ids, training), source_ids, training)

    def compile(self, *args, **kwargs):
        """Keras' compile; also notes whether the loss and metrics all leave padding labels out, which
        gathered training logits need (real_positions.py)."""
        super().compile(*args, **kwargs)
        given = inspect.signature(keras.Model.compile).bind(self, *args, **kwargs).arguments
        self.objective_ignores_padding = ignores_padding(
            given.get("loss"), given.get("metrics"), given.get("weighted_metrics")
        )

    def train_step(self, *args, **kwargs):
        """Keras' step (`data` is its last argument on every backend), with the logits gathered at the real
        target positions where the backend allows (real_positions.py): padding rows skip the projection;
        the batch's rows in parts where TensorFlow's pools run them side by side (row_parts_step.py)."""
        data = args[-1] if args else kwargs["data"]
        _, _, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        parts = row_parts(self, sample_weight)
        with gathered_logits(can_gather(self, sample_weight)):
            if parts > 1:  # on TensorFlow only, where `data` is the step's one argument
                return step_in_parts(self, data, parts, training=True)
            return super().train_step(*args, **kwargs)

    def test_step(self, *args, **kwargs):
        """Keras' step, or in row parts where training's step is cut too (row_parts_step.py)."""
        data = args[-1] if args else kwargs["data"]
        parts = row_parts(self, keras.utils.unpack_x_y_sample_weight(data)[2])
        if parts > 1:
            return step_in_parts(self, data, parts, training=False)
        return super().test_step(*args, **kwargs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return super().compute_loss(x, _labels_for(x, y, y_pred), y_pred, sample_weight, training)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        return super().compute_metrics(x, _labels_for(x, y, y_pred), y_pred, sample_weight)

    def get_config(self) -> dict:
        sizes = ("source_vocab_size", "target_vocab_size", "max_source_length", "max_target_length")
        return {
            **super().get_config(),
            "model_config": dataclasses.asdict(self.config),
            **{name: getattr(self, name) for name in sizes},
        }

    @classmethod
    def from_config(cls, config: dict) -> Transformer:
        """Also reads the flat knobs of model.keras files saved before `ModelConfig` existed."""
        model_config, rest = split_model_config(config)
        return cls(model_config, **rest)


def _labels_for(x, y, y_pred):
    """The labels `y` (B, T), or the ones at the real target positions when `y_pred` holds gathered logits
    (N, V): one rank fewer than full logits (B, T, V)."""
    if y is None or len(y_pred.shape) == len(y.shape) + 1:
        return y
    return at_real_positions(y, x[1])
