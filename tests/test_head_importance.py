"""Head importance on a tiny untrained model: masking a head removes exactly its contribution and
changes the loss, masking nothing reproduces it, and the weights come back bit for bit."""

from contextlib import contextmanager

import keras
import numpy as np
import pytest

from tests.float_tolerance import FLOAT32
from tx_keras.diagnostics.head_importance import attention_layers, head_importance, head_masked
from tx_keras.models import ModelConfig, Transformer
from tx_keras.training.callbacks.head_importance import heat_map
from tx_keras.training.step.masked_loss import MaskedCrossEntropy


def _model(impl: str) -> tuple[Transformer, tuple[np.ndarray, np.ndarray], np.ndarray]:
    config = ModelConfig(
        num_encoder_layers=2, num_decoder_layers=1, d_model=16, num_heads=4, dff=32, attention_impl=impl
    )
    model = Transformer(config, 11, 11, 7, 7)
    rng = np.random.default_rng(0)
    source = rng.integers(1, 11, size=(6, 7))
    target = rng.integers(1, 11, size=(6, 8))
    source[0, 5:] = 0  # some padding
    inputs = (source, target[:, :-1])
    model(inputs)
    return model, inputs, target[:, 1:]


@contextmanager
def values_zeroed(layer, head: int):
    """Head `head`'s W_v and value bias set to zero inside the block, put back after it."""
    if hasattr(layer, "value_kernel"):  # the fused layout: (d, h, d_k) kernel, (h, d_k) bias
        slices = [(layer.value_kernel, (slice(None), head)), (layer.value_bias, (head,))]
    else:  # looped: head i's own Dense
        dense = layer._heads[head]._value
        slices = [(dense.kernel, (...,)), (dense.bias, (...,))]
    saved = [keras.ops.convert_to_numpy(variable).copy() for variable, _ in slices]
    for (variable, where), values in zip(slices, saved, strict=True):
        zeroed = values.copy()
        zeroed[where] = 0.0
        variable.assign(zeroed)
    try:
        yield
    finally:
        for (variable, _), values in zip(slices, saved, strict=True):
            variable.assign(values)


def _loss(model, inputs, labels):
    return lambda: float(MaskedCrossEntropy()(labels, model(inputs)))


@pytest.mark.parametrize("impl", ["fused", "looped"])
def test_every_head_changes_the_loss_and_the_weights_come_back_bit_for_bit(impl):
    model, inputs, labels = _model(impl)
    before = [w.copy() for w in model.get_weights()]
    loss = _loss(model, inputs, labels)
    base = loss()
    importance = head_importance(model, loss)
    assert importance.base_loss == base == loss()  # masking nothing reproduces the loss
    _, attention, _ = model.trace(inputs)
    assert list(importance.increase) == list(attention_layers(model)) and set(importance.increase) == set(
        attention
    )
    assert all(len(values) == 4 for values in importance.increase.values())
    # Pinned to the loss with the head removed another way: its values zeroed (W_v and its bias), so its
    # attention output is zero and concat(heads) @ W_o loses exactly its term; minus the base loss.
    for name, layer in attention_layers(model).items():
        for head, increase in enumerate(importance.increase[name]):
            with values_zeroed(layer, head):
                assert increase == pytest.approx(loss() - base, rel=1e-4, abs=1e-6), (name, head)
    assert min(abs(value) for values in importance.increase.values() for value in values) > 1e-5
    after = model.get_weights()
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.mark.parametrize("impl", ["fused", "looped"])
def test_a_masked_head_contributes_nothing_whatever_its_values(impl):
    model, inputs, labels = _model(impl)
    layer = attention_layers(model)["encoder_self/layer_1"]
    value = layer.value_kernel if impl == "fused" else layer._heads[1]._value.kernel
    hidden = keras.random.normal((2, 5, 16), seed=1)
    with head_masked(layer, 1):
        masked = keras.ops.convert_to_numpy(layer(hidden))
        saved = keras.ops.convert_to_numpy(value)
        changed = saved.copy()
        if impl == "fused":
            changed[:, 1, :] *= 3.0  # head 2's W_v
        else:
            changed *= 3.0
        value.assign(changed)
        assert np.allclose(keras.ops.convert_to_numpy(layer(hidden)), masked, **FLOAT32)
        value.assign(saved)
    assert not np.allclose(keras.ops.convert_to_numpy(layer(hidden)), masked, atol=1e-3)


def test_the_table_and_the_heat_map():
    model, inputs, labels = _model("fused")
    importance = head_importance(model, _loss(model, inputs, labels))
    table = importance.markdown(6)
    assert "| encoder_self/layer_2 |" in table and "head 4" in table and "first 6 validation pairs" in table
    assert importance.record()["loss_increase"]["cross/layer_1"] == importance.increase["cross/layer_1"]
    image = heat_map(importance, "test")
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
    assert image.std() > 10  # not a blank canvas
