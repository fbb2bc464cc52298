"""model.tie_embeddings: the logits come from the decoder's own token table, and everything that reads
logits (training, cached decoding, .keras files) still agrees."""

import dataclasses

import keras
import numpy as np
from keras import ops

from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.models import ModelConfig, Transformer

RNG = np.random.default_rng(1)
SIZE = dict(source_vocab_size=20, target_vocab_size=24, max_source_length=6, max_target_length=6)
CONFIG = ModelConfig(num_encoder_layers=1, num_decoder_layers=2, d_model=16, num_heads=2, dff=32)
INPUTS = (RNG.integers(4, 20, (3, 6)).astype("int32"), RNG.integers(4, 24, (3, 6)).astype("int32"))


def _tied():
    model = Transformer(dataclasses.replace(CONFIG, tie_embeddings=True), **SIZE)
    model(INPUTS)
    model.logits_bias.assign(RNG.normal(size=(24,)).astype("float32"))
    return model


def test_tied_logits_are_states_times_the_decoder_token_table_plus_bias():
    model = _tied()
    memory = model.encode(INPUTS[0])
    hidden = model.decoder(INPUTS[1], memory, source_mask=ops.not_equal(INPUTS[0], 0))
    table = ops.convert_to_numpy(model.decoder.token_table)
    expected = ops.convert_to_numpy(hidden) @ table.T + ops.convert_to_numpy(model.logits_bias)
    np.testing.assert_allclose(ops.convert_to_numpy(model(INPUTS)), expected, rtol=1e-5, atol=1e-5)


def test_tying_removes_exactly_one_vocabulary_by_width_matrix():
    untied = Transformer(CONFIG, **SIZE)
    untied(INPUTS)
    assert untied.count_params() - _tied().count_params() == 24 * 16


def test_tied_model_round_trips_through_config_and_keras_file(tmp_path):
    model = _tied()
    assert Transformer.from_config(model.get_config()).config.tie_embeddings is True
    model.save(tmp_path / "tied.keras")
    loaded = keras.saving.load_model(tmp_path / "tied.keras")
    np.testing.assert_allclose(
        ops.convert_to_numpy(loaded(INPUTS)), ops.convert_to_numpy(model(INPUTS)), rtol=1e-5, atol=1e-5
    )


def test_cached_decoding_of_a_tied_model_equals_full_recomputation():
    model = _tied()
    cached = cached_greedy_decoder(model, 6)(INPUTS[0])
    full = greedy_decoder(model, 6)(INPUTS[0])
    np.testing.assert_array_equal(ops.convert_to_numpy(cached), ops.convert_to_numpy(full))
