"""Fused and looped multi-head attention against keras.layers.MultiHeadAttention (the acceptance tests)."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.components import resolve
from tx_keras.layers import AlignedAttention, LoopedMultiHeadAttention, MultiHeadAttention

B, T, D, H = 2, 5, 8, 2
RNG = np.random.default_rng(0)
KEY_MASK = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)  # sequence 2 has two padding tokens


def _x(*shape):
    return RNG.normal(size=shape).astype("float32")


def _np(x):
    return ops.convert_to_numpy(x)


def _pair(d_model=D, num_heads=H, query_shape=(B, T, D), value_shape=None):
    """Our fused layer and Keras' reference with the same (random, non-zero-bias) weights."""
    ours = MultiHeadAttention(num_heads, d_model)
    ours.build(query_shape, value_shape)
    ours.set_weights([RNG.normal(scale=0.5, size=w.shape).astype("float32") for w in ours.get_weights()])
    ref = keras.layers.MultiHeadAttention(num_heads, key_dim=d_model // num_heads)
    ref.build(query_shape, value_shape or query_shape)
    ref.set_weights(ours.get_weights())
    return ours, ref


def _pad_mask(key_mask, query_length):
    return np.broadcast_to(key_mask[:, None, :], (key_mask.shape[0], query_length, key_mask.shape[1]))


CASES = {
    "none": ({}, {}),
    "padding": ({"key_mask": KEY_MASK}, {"attention_mask": _pad_mask(KEY_MASK, T)}),
    "causal": ({"use_causal_mask": True}, {"use_causal_mask": True}),
    "padding+causal": (
        {"key_mask": KEY_MASK, "use_causal_mask": True},
        {"attention_mask": _pad_mask(KEY_MASK, T), "use_causal_mask": True},
    ),
}


def test_weight_layout_matches_keras():
    ours, ref = _pair()
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in ref.weights]
    assert [tuple(w.shape) for w in ours.weights] == [
        (D, H, D // H),
        (H, D // H),
        (D, H, D // H),
        (H, D // H),
        (D, H, D // H),
        (H, D // H),
        (H, D // H, D),
        (D,),
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_fused_equals_keras_reference(case):
    ours_kwargs, ref_kwargs = CASES[case]
    ours, ref = _pair()
    x = _x(B, T, D)
    out, scores = ours(x, return_attention_scores=True, **ours_kwargs)
    ref_out, ref_scores = ref(x, x, return_attention_scores=True, **ref_kwargs)
    assert tuple(out.shape) == (B, T, D) and tuple(scores.shape) == (B, H, T, T)
    np.testing.assert_allclose(_np(out), _np(ref_out), **FLOAT32)
    np.testing.assert_allclose(_np(scores), _np(ref_scores), **FLOAT32)
    np.testing.assert_allclose(_np(ours(x, **ours_kwargs)), _np(ref(x, x, **ref_kwargs)), **FLOAT32)


@pytest.mark.parametrize("case", list(CASES))
def test_cross_attention_equals_keras_reference(case):
    tq, tk = 3, T
    ours_kwargs, ref_kwargs = CASES[case]
    if "attention_mask" in ref_kwargs:
        ref_kwargs = {**ref_kwargs, "attention_mask": _pad_mask(KEY_MASK, tq)}
    ours, ref = _pair(query_shape=(B, tq, D), value_shape=(B, tk, D))
    query, value = _x(B, tq, D), _x(B, tk, D)
    out, scores = ours(query, value, return_attention_scores=True, **ours_kwargs)
    ref_out, ref_scores = ref(query, value, return_attention_scores=True, **ref_kwargs)
    assert tuple(out.shape) == (B, tq, D) and tuple(scores.shape) == (B, H, tq, tk)
    np.testing.assert_allclose(_np(out), _np(ref_out), **FLOAT32)
    np.testing.assert_allclose(_np(scores), _np(ref_scores), **FLOAT32)


def test_cross_attention_with_different_widths_equals_keras_reference():
    ours, ref = _pair(query_shape=(B, 3, D), value_shape=(B, 4, 6))
    query, value = _x(B, 3, D), _x(B, 4, 6)
    np.testing.assert_allclose(_np(ours(query, value)), _np(ref(query, value)), **FLOAT32)
    assert ours.compute_output_shape((B, 3, D), (B, 4, 6)) == (B, 3, D)


def test_weights_sum_to_one_and_zero_on_masked_keys():
    ours, _ = _pair()
    _, scores = ours(_x(B, T, D), key_mask=KEY_MASK, use_causal_mask=True, return_attention_scores=True)
    scores = _np(scores)
    np.testing.assert_allclose(scores.sum(-1), np.ones((B, H, T)), **FLOAT32)
    future = ~np.tril(np.ones((T, T), bool))
    assert np.all(scores[:, :, future] == 0.0)
    assert np.all(scores[1, :, :, 3:] == 0.0)
    allowed = np.broadcast_to(
        np.tril(np.ones((T, T), bool))[None, None] & KEY_MASK[:, None, None, :], scores.shape
    )
    assert np.all(scores[allowed] > 0.0)
    _, padded_only = ours(_x(B, T, D), key_mask=KEY_MASK, return_attention_scores=True)
    padded_only = _np(padded_only)
    np.testing.assert_allclose(padded_only.sum(-1), np.ones((B, H, T)), **FLOAT32)
    assert np.all(padded_only[1, :, :, 3:] == 0.0) and np.all(padded_only[0] > 0.0)


def _outputs(layer, x, return_scores, **kwargs):
    out = layer(x, return_attention_scores=return_scores, **kwargs)
    return _np(out[0] if return_scores else out)


@pytest.mark.parametrize("impl", ["fused", "looped"])
@pytest.mark.parametrize("return_scores", [False, True])
def test_future_tokens_do_not_change_earlier_outputs(impl, return_scores):
    layer = resolve("attention", impl)(H, D)
    x = _x(B, T, D)
    changed = x.copy()
    changed[:, 3:] += 10.0 * _x(B, T - 3, D)
    before = _outputs(layer, x, return_scores, use_causal_mask=True)
    after = _outputs(layer, changed, return_scores, use_causal_mask=True)
    np.testing.assert_allclose(after[:, :3], before[:, :3], **FLOAT32)
    assert not np.allclose(after[:, 3:], before[:, 3:], atol=1e-3)  # the change does reach later positions
    # Without the causal mask, the future leaks into the past.
    assert not np.allclose(
        _outputs(layer, changed, return_scores)[:, :3], _outputs(layer, x, return_scores)[:, :3]
    )


@pytest.mark.parametrize("impl", ["fused", "looped"])
@pytest.mark.parametrize("return_scores", [False, True])
def test_padding_tokens_do_not_change_real_outputs(impl, return_scores):
    layer = resolve("attention", impl)(H, D)
    x = _x(B, T, D)
    changed = x.copy()
    changed[1, 3:] = 100.0 * _x(2, D)  # only sequence 2's padding positions change
    before = _outputs(layer, x, return_scores, key_mask=KEY_MASK)
    after = _outputs(layer, changed, return_scores, key_mask=KEY_MASK)
    np.testing.assert_allclose(after[0], before[0], **FLOAT32)
    np.testing.assert_allclose(after[1, :3], before[1, :3], **FLOAT32)
    leaked = _outputs(layer, changed, return_scores)[1, :3]  # without the key mask the padding leaks in
    assert not np.allclose(leaked, _outputs(layer, x, return_scores)[1, :3], atol=1e-3)


@pytest.mark.parametrize("impl", ["fused", "looped"])
@pytest.mark.parametrize("return_scores", [False, True])
def test_the_key_mask_still_applies_with_the_causal_mask(impl, return_scores):
    """Right padding sits in every real query's future, so the causal mask alone would hide it and a
    dropped key mask would go unnoticed: here a masked key sits in the past (position 1 of sequence 2)."""
    hole = np.array([[1, 1, 1, 1, 1], [1, 0, 1, 1, 1]], bool)
    layer = resolve("attention", impl)(H, D)
    x = _x(B, T, D)
    changed = x.copy()
    changed[1, 1] = 100.0 * _x(D)  # only the masked key changes
    before = _outputs(layer, x, return_scores, key_mask=hole, use_causal_mask=True)
    after = _outputs(layer, changed, return_scores, key_mask=hole, use_causal_mask=True)
    np.testing.assert_allclose(after[0], before[0], **FLOAT32)
    np.testing.assert_allclose(after[1, 2:], before[1, 2:], **FLOAT32)  # the later queries do not see it
    causal_only = _outputs(layer, changed, return_scores, use_causal_mask=True)[1, 2:]
    assert not np.allclose(
        causal_only, _outputs(layer, x, return_scores, use_causal_mask=True)[1, 2:], atol=1e-3
    )
    _, scores = layer(x, key_mask=hole, use_causal_mask=True, return_attention_scores=True)
    assert np.all(_np(scores)[1, :, :, 1] == 0.0) and np.all(np.triu(_np(scores)[0, 0], k=1) == 0.0)


@pytest.mark.parametrize("impl", ["fused", "looped"])
@pytest.mark.parametrize("case", list(CASES))
def test_returning_scores_does_not_change_outputs(impl, case):
    layer = resolve("attention", impl)(H, D)
    x = _x(B, T, D)
    plain = layer(x, **CASES[case][0])
    out, scores = layer(x, return_attention_scores=True, **CASES[case][0])
    np.testing.assert_array_equal(_np(out), _np(plain))
    assert tuple(scores.shape) == (B, H, T, T)


@pytest.mark.parametrize("case", list(CASES))
def test_looped_equals_fused_after_copy(case):
    fused, _ = _pair()
    looped = LoopedMultiHeadAttention(H, D)
    looped.build((B, T, D))
    looped.copy_from(fused)
    x = _x(B, T, D)
    out, scores = fused(x, return_attention_scores=True, **CASES[case][0])
    looped_out, looped_scores = looped(x, return_attention_scores=True, **CASES[case][0])
    assert tuple(looped_scores.shape) == (B, H, T, T)
    np.testing.assert_allclose(_np(looped_out), _np(out), **FLOAT32)
    np.testing.assert_allclose(_np(looped_scores), _np(scores), **FLOAT32)


def test_looped_cross_attention_equals_fused_after_copy():
    fused, ref = _pair(d_model=12, num_heads=3, query_shape=(B, 3, 12), value_shape=(B, 4, 12))
    looped = LoopedMultiHeadAttention(3, 12)
    looped.build((B, 3, 12), (B, 4, 12))
    looped.copy_from(fused)
    query, value = _x(B, 3, 12), _x(B, 4, 12)
    key_mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool)
    out = _np(fused(query, value, key_mask=key_mask))
    np.testing.assert_allclose(_np(looped(query, value, key_mask=key_mask)), out, **FLOAT32)
    np.testing.assert_allclose(_np(ref(query, value, attention_mask=_pad_mask(key_mask, 3))), out, **FLOAT32)


def test_looped_copy_without_bias():
    fused = MultiHeadAttention(H, D, use_bias=False)
    fused.build((B, T, D))
    looped = LoopedMultiHeadAttention(H, D, use_bias=False)
    looped.build((B, T, D))
    assert len(fused.weights) == 4 and len(looped.weights) == 3 * H + 1
    looped.copy_from(fused)
    x = _x(B, T, D)
    np.testing.assert_allclose(
        _np(looped(x, use_causal_mask=True)), _np(fused(x, use_causal_mask=True)), **FLOAT32
    )


def test_looped_heads_are_slices_of_fused_kernels():
    fused, _ = _pair()
    looped = LoopedMultiHeadAttention(H, D)
    looped.build((B, T, D))
    looped.copy_from(fused)
    for i, head in enumerate(looped._heads):
        np.testing.assert_array_equal(_np(head._query.kernel), _np(fused.query_kernel)[:, i, :])
        np.testing.assert_array_equal(_np(head._value.bias), _np(fused.value_bias)[i])
    np.testing.assert_array_equal(_np(looped._output.kernel), _np(fused.output_kernel).reshape(D, D))


@pytest.mark.parametrize("layer_cls", [MultiHeadAttention, LoopedMultiHeadAttention])
def test_heads_must_divide_d_model(layer_cls):
    with pytest.raises(ValueError, match="d_model=10") as error:
        layer_cls(num_heads=3, d_model=10)
    assert "num_heads=3" in str(error.value)
    with pytest.raises(ValueError, match="num_heads=0"):
        layer_cls(num_heads=0, d_model=8)
    with pytest.raises(ValueError):
        layer_cls(num_heads=-2, d_model=8)
    assert layer_cls(num_heads=4, d_model=8).key_dim == 2


@pytest.mark.parametrize("layer_cls", [MultiHeadAttention, LoopedMultiHeadAttention, AlignedAttention])
def test_every_form_takes_the_shared_arguments_in_one_order(layer_cls):
    """The arguments `MultiHeadBase` defines, in its order, by position as by keyword, reach the weights and
    dropout each form builds (the looped form's heads too)."""
    shared = {"num_heads": 2, "d_model": 8, "dropout": 0.25, "use_bias": False, "kernel_initializer": "ones"}
    for layer in (layer_cls(*shared.values()), layer_cls(**shared)):
        assert {key: layer.get_config()[key] for key in shared} == shared
        layer.build((B, T, D))
        assert layer.weights and not [w.path for w in layer.weights if "bias" in w.path]
        assert all(np.all(_np(w) == 1.0) for w in layer.weights)
        dropouts = [sub for sub in layer._flatten_layers() if isinstance(sub, keras.layers.Dropout)]
        assert dropouts and {dropout.rate for dropout in dropouts} == {0.25}


@pytest.mark.parametrize("layer_cls", [MultiHeadAttention, LoopedMultiHeadAttention])
def test_config_round_trip(layer_cls):
    layer = layer_cls(num_heads=2, d_model=8, dropout=0.1, use_bias=False, name="mha")
    x = _x(B, T, D)
    out = layer(x, key_mask=KEY_MASK, use_causal_mask=True)
    config = layer.get_config()
    assert {k: config[k] for k in ("num_heads", "d_model", "dropout", "use_bias")} == {
        "num_heads": 2,
        "d_model": 8,
        "dropout": 0.1,
        "use_bias": False,
    }
    clone = layer_cls.from_config(config)
    assert clone.get_config() == config
    clone.build((B, T, D))
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(_np(clone(x, key_mask=KEY_MASK, use_causal_mask=True)), _np(out), **FLOAT32)


@pytest.mark.parametrize("impl", ["fused", "looped"])
def test_keras_save_load(tmp_path, impl):
    query = keras.Input((T, D))
    value = keras.Input((4, D))
    key_mask = keras.Input((4,), dtype="bool")
    self_out = resolve("attention", impl)(H, D, name="mha")(query, use_causal_mask=True)
    cross_out = resolve("attention", impl)(H, D, name="cross")(self_out, value, key_mask=key_mask)
    model = keras.Model([query, value, key_mask], cross_out)
    inputs = [_x(B, T, D), _x(B, 4, D), np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool)]
    before = _np(model(inputs))
    path = tmp_path / f"{impl}.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert type(loaded.get_layer("mha")) is resolve("attention", impl)
    after = _np(loaded(inputs))
    assert after.shape == (B, T, D)
    np.testing.assert_allclose(after, before, **FLOAT32)
    for name in ("mha", "cross"):
        for a, b in zip(
            model.get_layer(name).get_weights(), loaded.get_layer(name).get_weights(), strict=True
        ):
            np.testing.assert_array_equal(a, b)
    # The restored layer still masks: sequence 2's padded keys get zero weight.
    _, scores = loaded.get_layer("cross")(
        inputs[0], inputs[1], key_mask=inputs[2], return_attention_scores=True
    )
    assert np.all(_np(scores)[1, :, :, 2:] == 0.0)


@pytest.mark.parametrize("impl", ["fused", "looped"])
def test_symbolic_call_returns_attention_scores(impl):
    """Like keras.layers.MultiHeadAttention, a functional (symbolic) call must give (outputs, scores):
    compute_output_shape must honour return_attention_scores, or the scores are lost in any functional
    model."""
    query, value = keras.Input((T, D)), keras.Input((4, D))
    result = resolve("attention", impl)(H, D)(query, value, return_attention_scores=True)
    assert isinstance(result, tuple | list) and len(result) == 2
    outputs, scores = result
    assert tuple(outputs.shape) == (None, T, D)
    assert tuple(scores.shape) == (None, H, T, 4)


@pytest.mark.parametrize("impl", ["fused", "looped"])
def test_a_filled_cross_attention_cache_read_as_it_is_equals_call(impl):
    """Decoding fills a cache from the encoder output once (cache_update_index=0) and then reads it as it
    is (no index): both must give `call`'s numbers, the cache in the (2, B, h, Ts, d_k) layout."""
    layer = resolve("attention", impl)(num_heads=4, d_model=16)
    rng = np.random.default_rng(0)
    query = rng.normal(size=(2, 3, 16)).astype("float32")
    memory = rng.normal(size=(2, 5, 16)).astype("float32")
    key_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
    expected, expected_weights = layer(query, memory, key_mask=key_mask, return_attention_scores=True)
    empty = np.zeros((2, 2, 4, 5, 4), "float32")
    filled, _, cache = layer(
        query[:, :1],
        memory,
        key_mask=key_mask,
        return_attention_scores=True,
        cache=empty,
        cache_update_index=0,
    )
    assert tuple(cache.shape) == (2, 2, 4, 5, 4)
    np.testing.assert_allclose(ops.convert_to_numpy(filled), ops.convert_to_numpy(expected)[:, :1], **FLOAT32)
    outputs, weights, unchanged = layer(query, key_mask=key_mask, return_attention_scores=True, cache=cache)
    np.testing.assert_array_equal(ops.convert_to_numpy(unchanged), ops.convert_to_numpy(cache))
    np.testing.assert_allclose(ops.convert_to_numpy(outputs), ops.convert_to_numpy(expected), **FLOAT32)
    np.testing.assert_allclose(
        ops.convert_to_numpy(weights), ops.convert_to_numpy(expected_weights), **FLOAT32
    )
    assert np.all(ops.convert_to_numpy(weights)[0, :, :, 3:] == 0.0)
