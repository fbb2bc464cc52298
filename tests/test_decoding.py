"""The cached greedy decoder against the uncached reference: same words, same attention, one trace."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.float_tolerance import FLOAT32
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.cached_step import decode_step, start_caches
from tx_keras.decoding.compiled_decoder import decode_in_batches
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.models import ModelConfig, Transformer
from tx_keras.special_tokens import EOS, SOS


def test_cached_greedy_gives_exactly_the_reference_words(copy_model):
    model, source = copy_model
    length = model.max_target_length
    reference = decode_in_batches(greedy_decoder(model, length), source)
    cached = decode_in_batches(cached_greedy_decoder(model, length), source)
    np.testing.assert_array_equal(cached, reference)
    stopped = (reference == EOS).any(axis=1)
    assert stopped.mean() > 0.9, "the tiny model should have learnt to stop"
    after_eos = np.cumsum(reference == EOS, axis=1) - (reference == EOS) > 0
    assert np.all(reference[after_eos] == 0), "nothing may follow EOS"


def test_cached_greedy_returns_the_cross_attention_of_each_output_word(copy_model):
    model, source = copy_model
    ids, attention = cached_greedy_decoder(model, model.max_target_length, return_attention_scores=True)(
        source[:4]
    )
    decoder_inputs = np.concatenate([np.full((4, 1), SOS), ids.numpy()[:, :-1]], axis=1)
    _, maps, _ = model.trace((source[:4], decoder_inputs))
    for layer in range(model.num_decoder_layers):
        expected = maps[f"cross/layer_{layer + 1}"].numpy()
        for row in range(4):
            steps = int(np.argmax(ids.numpy()[row] == EOS)) + 1  # positions decoded for this row
            np.testing.assert_allclose(attention[row, layer, :, :steps], expected[row, :, :steps], **FLOAT32)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"norm": "pre", "positions": "learned"},
        {"attention_impl": "looped", "residual": False},
        {"norm": "none", "ffn": False, "positions": "none"},
        {"positions": "rotary"},
        {"attention_impl": "looped", "positions": "rotary", "norm": "pre"},
        {"attention": "none"},
        {"fused_qkv": True, "tie_embeddings": True},
    ],
)
def test_each_step_gives_the_full_decoders_logits(options):
    """Untrained models of every shape: step t of the cache equals position t of a full decode."""
    keras.utils.set_random_seed(1)
    config = ModelConfig(
        num_encoder_layers=2, num_decoder_layers=2, d_model=16, num_heads=4, dff=32, **options
    )
    model = Transformer(config, 12, 11, 7, 6)
    rng = np.random.default_rng(0)
    source = rng.integers(4, 12, size=(3, 7)).astype("int32")
    source[0, 4:] = 0
    target = np.concatenate([np.full((3, 1), SOS), rng.integers(3, 11, size=(3, 5))], 1).astype("int32")
    target[1, 3:] = 0  # a sentence that ended: its padding stays hidden from later positions
    full = model((source, target)).numpy()
    memory = model.encode(source)
    caches = start_caches(model, memory, 6)  # cross-attention ones filled from memory, read by every step
    buffer = tf.concat([target, tf.zeros([3, 1], tf.int32)], axis=1)
    for t in range(6):
        logits, caches, _ = decode_step(model, buffer, tf.constant(t), caches, memory, source != 0)
        np.testing.assert_allclose(logits.numpy(), full[:, t], atol=1e-4)
    # keys and values on the leading axis (2, B, h, T, d_k): each half is read without a copy
    assert [tuple(cache.shape) for cache in caches[0]] == [(2, 3, 4, 6, 4)] * 2
    assert [tuple(cache.shape) for cache in caches[1]] == [(2, 3, 4, 7, 4)] * 2
    # the decoder's call fills the same cross-attention caches when asked to write them at index 0
    empty_self, empty_cross = [tf.zeros_like(c) for c in caches[0]], [tf.zeros_like(c) for c in caches[1]]
    _, _, filled, _ = model.decoder(
        buffer[:, :1], memory, source_mask=source != 0, self_attention_caches=empty_self,
        cross_attention_caches=empty_cross, cache_update_index=0, cross_attention_cache_update_index=0,
    )  # fmt: skip
    for ours, theirs in zip(filled, caches[1], strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **FLOAT32)


def test_cached_decoder_traces_once_for_every_length_and_batch(copy_model):
    model, source = copy_model
    decode = cached_greedy_decoder(model, model.max_target_length)
    for rows in (1, 5, 17):
        decode(source[:rows])
    assert decode.experimental_get_tracing_count() == 1
    assert decode(source[:0]).shape == (0, model.max_target_length)
