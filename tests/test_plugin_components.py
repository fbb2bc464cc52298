"""A user's own components, selected from the config alone: this module defines an attention, a norm and a
feed-forward class (the contracts of docs/configuring.md, "Your own component"), and tx-train trains,
decodes and exports a model built from them; rotary positions, the built-in that works through the same
mechanism, train, decode, export and resume too."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tests.conftest import TINY
from tests.float_tolerance import FLOAT32
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.models import ModelConfig, Transformer

ROOT = Path(__file__).resolve().parents[1]
HERE = "tests.test_plugin_components"


@keras.saving.register_keras_serializable(package="plugin_test")
class ToyAttention(keras.layers.Layer):
    """Plain multi-head attention written from scratch against the attention call contract: separate
    q/k/v/output Dense layers, heads by reshaping, the (2, B, h, T, d_k) key/value cache of decoding."""

    def __init__(self, num_heads: int, d_model: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads, self.d_model, self.dropout = num_heads, d_model, dropout
        self.key_dim = d_model // num_heads
        self.supports_masking = True  # the output keeps the query's padding positions
        dense = {"dtype": self.dtype_policy}
        self._query, self._key, self._value, self._output = (
            keras.layers.Dense(d_model, name=name, **dense) for name in ("query", "key", "value", "output")
        )
        self._dropout = keras.layers.Dropout(dropout, **dense)

    def build(self, query_shape, value_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        self._query.build(query_shape)
        self._output.build(query_shape)
        self._key.build(value_shape)
        self._value.build(value_shape)
        self.built = True

    def _heads(self, x):
        """(B, T, d_model) -> (B, h, T, d_k)."""
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        return ops.transpose(ops.reshape(x, (batch, length, self.num_heads, self.key_dim)), (0, 2, 1, 3))

    def call(
        self,
        query,
        value=None,
        key=None,
        attention_mask=None,
        key_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        training=None,
        cache=None,
        cache_update_index=None,
    ):
        value = query if value is None else value
        key = value if key is None else key
        queries = self._heads(self._query(query))
        if cache is not None and cache_update_index is None:  # a filled cross-attention cache
            keys, values = cache[0], cache[1]
        else:
            keys, values = self._heads(self._key(key)), self._heads(self._value(value))
            if cache is not None:  # write the new positions, then read every position written so far
                start = (0, 0, 0, cache_update_index, 0)
                cache = ops.slice_update(cache, start, ops.cast(ops.stack([keys, values]), cache.dtype))
                keys, values = cache[0], cache[1]
        scores = ops.einsum("bhqd,bhkd->bhqk", queries, keys) / ops.cast(self.key_dim**0.5, queries.dtype)
        allowed = ops.ones_like(scores, dtype="bool")
        if key_mask is not None:
            allowed = ops.logical_and(allowed, ops.cast(key_mask, "bool")[:, None, None, :])
        if attention_mask is not None:
            allowed = ops.logical_and(allowed, ops.cast(attention_mask, "bool")[:, None])
        if use_causal_mask:  # the new queries sit at cache_update_index, cache_update_index + 1, ...
            first = 0 if cache_update_index is None else cache_update_index
            rows = ops.arange(ops.shape(scores)[2]) + first
            allowed = ops.logical_and(allowed, ops.arange(ops.shape(scores)[3])[None, :] <= rows[:, None])
        weights = ops.softmax(ops.where(allowed, scores, ops.cast(-1e9, scores.dtype)), axis=-1)
        attended = ops.einsum("bhqk,bhkd->bhqd", self._dropout(weights, training=training), values)
        batch, length = ops.shape(attended)[0], ops.shape(attended)[2]
        outputs = self._output(
            ops.reshape(ops.transpose(attended, (0, 2, 1, 3)), (batch, length, self.d_model))
        )
        result = (outputs, weights) if return_attention_scores else (outputs,)
        result += () if cache is None else (cache,)
        return result if len(result) > 1 else outputs

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "d_model": self.d_model,
            "dropout": self.dropout,
        }


@keras.saving.register_keras_serializable(package="plugin_test")
class ToyRMSNorm(keras.layers.Layer):
    """RMSNorm (Zhang & Sennrich 2019): a scale, no centring, no bias; built as cls(name=, dtype=)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")
        self.built = True

    def call(self, x):
        return x * ops.rsqrt(ops.mean(ops.square(x), axis=-1, keepdims=True) + 1e-6) * self.scale


@keras.saving.register_keras_serializable(package="plugin_test")
class ToyGatedFeedForward(keras.layers.Layer):
    """A gated FFN, activation(x W) * (x V) then W_out (Shazeer 2020): the ffn contract
    `cls(d_model, dff, activation, dropout, name=, dtype=)`, `call(x, training=None)`."""

    def __init__(self, d_model: int, dff: int, activation: str = "relu", dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.dff, self.activation, self.dropout = d_model, dff, activation, dropout
        self.supports_masking = True
        self._gate = keras.layers.Dense(dff, activation=activation, name="gate", dtype=self.dtype_policy)
        self._linear = keras.layers.Dense(dff, name="linear", dtype=self.dtype_policy)
        self._output = keras.layers.Dense(d_model, name="output", dtype=self.dtype_policy)

    def build(self, input_shape):
        self._gate.build(input_shape)
        self._linear.build(input_shape)
        self._output.build((*input_shape[:-1], self.dff))
        self.built = True

    def call(self, x, training=None):
        return self._output(self._gate(x) * self._linear(x))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "d_model": self.d_model,
            "dff": self.dff,
            "activation": self.activation,
            "dropout": self.dropout,
        }


PLUGINS = [
    f"model.attention_impl={HERE}.ToyAttention",
    f"model.norm_impl={HERE}.ToyRMSNorm",
    f"model.ffn_impl={HERE}.ToyGatedFeedForward",
    "model.norm=pre",  # the final norm is the user's too
]


def _train(run_dir: Path, *overrides: str) -> subprocess.CompletedProcess:
    """tx-train as a user runs it, with this repository on PYTHONPATH so `tests.` classes import."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tx_keras.cli.train",
            *TINY,
            "data=reverse",
            *overrides,
            f"hydra.run.dir={run_dir}",
        ],
        cwd=run_dir.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _model_and_source(run_dir: Path) -> tuple[Transformer, np.ndarray]:
    """The model of `run_dir` and source ids for it: random symbols, one row padded."""
    model = keras.saving.load_model(run_dir / "model.keras", compile=False)
    source = np.random.default_rng(0).integers(4, 16, (3, model.max_source_length)).astype("int32")
    source[1, 6:] = 0
    return model, source


def _check_run(run_dir: Path, result: subprocess.CompletedProcess) -> Transformer:
    """A completed run whose model.keras decodes the same cached and uncached and whose SavedModel
    translates; returns the reloaded model."""
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["metrics"]["test_exact_match"] >= 0
    model, source = _model_and_source(run_dir)
    length = model.max_target_length
    np.testing.assert_array_equal(
        cached_greedy_decoder(model, length)(source).numpy(), greedy_decoder(model, length)(source).numpy()
    )
    saved = tf.saved_model.load(str(run_dir / "export" / "saved_model"))
    translations = saved.signatures["translate"](texts=tf.constant(["s3 s4 s5 s6", "s7 s8"]))["translation"]
    assert translations.shape == (2,) and translations.dtype == tf.string
    return model


@pytest.mark.slow
def test_a_users_attention_norm_and_ffn_train_decode_and_export_from_the_config_alone(tmp_path):
    run_dir = tmp_path / "plugins"
    model = _check_run(run_dir, _train(run_dir, *PLUGINS))
    block = model.decoder._blocks[0]
    assert isinstance(block._self_attention, ToyAttention) and isinstance(
        block._cross_attention, ToyAttention
    )
    assert isinstance(block._ffn, ToyGatedFeedForward) and isinstance(model.decoder._final_norm, ToyRMSNorm)
    assert model.config.attention_impl == f"{HERE}.ToyAttention"  # model.keras keeps the import path


def test_the_toy_classes_keep_the_built_in_numbers_where_they_should():
    """The toy attention is exact multi-head attention: with the fused layer's weights it gives the
    fused layer's outputs, cached step by step as in one call."""
    config = ModelConfig(num_encoder_layers=1, num_decoder_layers=2, d_model=16, num_heads=2, dff=32)
    toy = Transformer(dataclasses.replace(config, attention_impl=f"{HERE}.ToyAttention"), 12, 12, 7, 6)
    plain = Transformer(config, 12, 12, 7, 6)
    source = np.random.default_rng(1).integers(4, 12, (2, 7)).astype("int32")
    target = np.random.default_rng(2).integers(4, 12, (2, 6)).astype("int32")
    toy((source, target))
    plain((source, target))
    toy.set_weights([w.reshape(t.shape) for w, t in zip(plain.get_weights(), toy.get_weights(), strict=True)])
    np.testing.assert_allclose(toy((source, target)).numpy(), plain((source, target)).numpy(), **FLOAT32)
    np.testing.assert_array_equal(
        cached_greedy_decoder(toy, 6)(source).numpy(), cached_greedy_decoder(plain, 6)(source).numpy()
    )


@pytest.mark.slow
def test_rotary_positions_train_decode_export_and_resume(tmp_path):
    run_dir = tmp_path / "rotary"
    first = _train(run_dir, "model.positions=rotary", "trainer.epochs=1")
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = _train(run_dir, "model.positions=rotary", "trainer.epochs=2")
    assert "after epoch 1 of 2" in resumed.stdout + resumed.stderr
    model = _check_run(run_dir, resumed)
    assert json.loads((run_dir / "summary.json").read_text())["epochs"] == 2
    assert model.config.positions == "rotary"
    assert model.decoder._blocks[0]._self_attention.position_rotation is not None
    assert model.decoder._blocks[0]._cross_attention.position_rotation is None
