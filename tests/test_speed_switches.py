"""Every speed switch computes what the plain float32 path computes (within tolerance); nothing here times."""

import dataclasses
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tests.float_tolerance import FLOAT32
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.layers import MultiHeadAttention
from tx_keras.models import ModelConfig, Transformer
from tx_keras.runtime import cpu_flags
from tx_keras.training.run.config_check import ConfigError, check_config
from tx_keras.training.step import precision
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.precision import precision_policy, resolve_precision

RNG = np.random.default_rng(0)
KEY_MASK = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)
SIZE = dict(source_vocab_size=20, target_vocab_size=20, max_source_length=6, max_target_length=6)
CONFIG = ModelConfig(num_encoder_layers=2, num_decoder_layers=2, d_model=16, num_heads=2, dff=32)


def _ids(rows=3, length=6):
    ids = RNG.integers(4, 20, (rows, length)).astype("int32")
    ids[1, 4:] = 0  # padding in one row: masks must agree too
    return ids


INPUTS = (_ids(), _ids())


def _pair(**kw):
    """The same Transformer weights in two models that differ only by `kw`."""
    plain = Transformer(CONFIG, **SIZE)
    plain(INPUTS)
    switched = Transformer(dataclasses.replace(CONFIG, **kw), **SIZE)
    switched(INPUTS)
    switched.set_weights(plain.get_weights())
    return plain, switched


@pytest.mark.parametrize("cross", [False, True])
def test_fused_qkv_attention_equals_separate_projections(cross):
    query = RNG.normal(size=(2, 5, 8)).astype("float32")
    value = RNG.normal(size=(2, 5, 8)).astype("float32") if cross else None
    layers = [MultiHeadAttention(2, 8, fused_qkv=fused) for fused in (False, True)]
    for layer in layers:
        layer.build(query.shape, None if value is None else value.shape)
    layers[1].set_weights([RNG.normal(size=w.shape).astype("float32") for w in layers[1].get_weights()])
    layers[0].set_weights(layers[1].get_weights())
    separate, fused = (
        layer(query, value, key_mask=KEY_MASK, use_causal_mask=not cross, return_attention_scores=True)
        for layer in layers
    )
    for a, b in zip(separate, fused, strict=True):
        np.testing.assert_allclose(ops.convert_to_numpy(a), ops.convert_to_numpy(b), **FLOAT32)
    empty = np.zeros((2, 2, 2, 5, 4), "float32")  # a decoding cache: keys and values of every position
    caches = [layer(query, value, cache=empty, cache_update_index=0)[1] for layer in layers]
    np.testing.assert_allclose(ops.convert_to_numpy(caches[0]), ops.convert_to_numpy(caches[1]), **FLOAT32)


def test_fused_qkv_transformer_keeps_logits_decoding_and_weight_layout():
    plain, fused = _pair(fused_qkv=True)
    assert [w.shape for w in plain.weights] == [w.shape for w in fused.weights]  # checkpoints interchange
    np.testing.assert_allclose(plain(INPUTS).numpy(), fused(INPUTS).numpy(), **FLOAT32)
    source = INPUTS[0]
    np.testing.assert_array_equal(
        cached_greedy_decoder(plain, 6)(source).numpy(), cached_greedy_decoder(fused, 6)(source).numpy()
    )


def test_mixed_bfloat16_model_matches_float32_loosely_and_restores_the_policy():
    plain = Transformer(CONFIG, **SIZE)
    plain(INPUTS)
    with precision_policy("mixed_bfloat16") as resolved:
        mixed = Transformer(CONFIG, **SIZE)
    assert resolved == "mixed_bfloat16"
    assert keras.mixed_precision.global_policy().name == "float32"  # the next sweep job starts clean
    mixed(INPUTS)
    mixed.set_weights(plain.get_weights())
    logits = mixed(INPUTS)
    # The vocabulary projection computes in bfloat16 like every layer; only its logits are cast to float32,
    # the boundary Keras' mixed-precision guide places before the softmax and loss.
    assert mixed.projection.compute_dtype == "bfloat16" and logits.dtype == "float32"
    expected = plain(INPUTS).numpy()
    np.testing.assert_allclose(logits.numpy(), expected, atol=0.05 * np.abs(expected).max())
    # the cached decoder runs under mixed precision and agrees with the uncached one
    np.testing.assert_array_equal(
        cached_greedy_decoder(mixed, 6)(INPUTS[0]).numpy(), greedy_decoder(mixed, 6)(INPUTS[0]).numpy()
    )


def test_mixed_bfloat16_model_survives_a_keras_file_round_trip(tmp_path):
    with precision_policy("mixed_bfloat16"):
        model = Transformer(CONFIG, **SIZE)
    model(INPUTS)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert loaded.dtype_policy.name == "mixed_bfloat16"
    np.testing.assert_allclose(loaded(INPUTS).numpy(), model(INPUTS).numpy(), **FLOAT32)


def _cpu_flags() -> set[str]:
    """The instruction flags the kernel lists for this machine's first CPU (empty off Linux)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return set()
    return next((set(line.split(":", 1)[1].split()) for line in lines if line.startswith("flags")), set())


def test_auto_precision_is_bf16_exactly_on_a_cpu_with_bf16_instructions():
    """On the AVX-512 BF16 EPYC mixed_bfloat16 ran ~25 % faster than float32, on the AVX2-only one 5x
    slower: `auto` must pick by the flags this CPU has (no test machine has a GPU for TensorFlow)."""
    assert not tf.config.list_physical_devices("GPU")
    bf16 = bool({"avx512_bf16", "amx_bf16"} & _cpu_flags())
    assert resolve_precision("auto") == ("mixed_bfloat16" if bf16 else "float32")
    assert (
        resolve_precision("float32") == "float32" and resolve_precision("mixed_bfloat16") == "mixed_bfloat16"
    )


@pytest.mark.parametrize(
    ("flags", "expected"), [("avx2 avx512f", "float32"), ("avx2 avx512_bf16", "mixed_bfloat16")]
)
def test_auto_precision_follows_the_cpuinfo_flags(monkeypatch, tmp_path, flags, expected):
    """Both kinds of machine, whichever this one is: a cpuinfo with and without the bf16 flag."""
    _cpuinfo_flags(monkeypatch, tmp_path, flags)
    assert resolve_precision("auto") == expected
    # XLA's CPU matmuls do not use the bf16 instructions: a compiled step stays float32 on either kind
    assert resolve_precision("auto", compiled=True) == "float32"
    assert resolve_precision("mixed_bfloat16", compiled=True) == "mixed_bfloat16"  # asked for: kept


def _cpuinfo_flags(monkeypatch, tmp_path, flags: str) -> None:
    """This process reads a cpuinfo whose first CPU has `flags`."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: fpu sse2 {flags}\n")
    monkeypatch.setattr(cpu_flags, "Path", lambda path: cpuinfo if path == "/proc/cpuinfo" else Path(path))
    monkeypatch.setattr(precision, "cpu_flags", cpu_flags.cpu_flags.__wrapped__)  # this file, not the cache


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ((), "mixed_bfloat16"),  # TensorFlow's graph step: oneDNN's bf16 kernels
        (("trainer.jit_compile=true",), "float32"),  # XLA
        (("trainer.backend=jax",), "float32"),  # JAX compiles every step (read from the config here)
    ],
)
def test_a_run_on_a_bf16_cpu_builds_its_model_in_the_precision_auto_gives_its_step(
    monkeypatch, tmp_path, overrides, expected
):
    """`build_and_compile` (what tx-train builds) asks whether the configured step is compiled."""
    from hydra import compose, initialize_config_module

    from tx_keras.data import build_task
    from tx_keras.training.run.config_check import check_config
    from tx_keras.training.run.model_build import build_and_compile

    _cpuinfo_flags(monkeypatch, tmp_path, "avx2 avx512f avx512_bf16")
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["model=tiny", "data.num_train=64", *overrides])
    run = check_config(cfg)
    model, _ = build_and_compile(run.model, run.trainer, build_task(run.data))
    assert model.dtype_policy.name == expected
    assert keras.mixed_precision.global_policy().name == "float32"  # restored for the next job


@pytest.mark.slow  # ~41 s on 2 cores (XLA compiles the step): an opt-in switch, checked with -m slow
def test_xla_and_plain_training_steps_give_the_same_loss():
    labels = np.concatenate([INPUTS[1][:, 1:], np.zeros((3, 1), "int32")], axis=1)
    losses = []
    for jit in (False, True):
        keras.utils.set_random_seed(0)
        model = Transformer(CONFIG, **SIZE)
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=MaskedCrossEntropy(), jit_compile=jit)
        losses.append([float(model.train_on_batch(INPUTS, labels)) for _ in range(3)])  # after 2 updates
    np.testing.assert_allclose(losses[0], losses[1], **FLOAT32)


@pytest.mark.parametrize(
    "override, message",
    [
        ({"precision": "half"}, "trainer.precision='half' is not allowed"),
        ({"jit_compile": "maybe"}, "trainer.jit_compile='maybe' is not allowed"),
    ],
)
def test_bad_speed_settings_are_config_errors(override, message):
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"trainer.{k}={v}" for k, v in override.items()])
    with pytest.raises(ConfigError, match=message):
        check_config(cfg)
