"""The allocator setting: applied by `configure_allocator()` (the commands call it before TensorFlow starts;
importing tx_keras does not: test_import_side_effects.py), switchable by TX_KERAS_ALLOCATOR, and it removes
the page faults of freeing and reallocating large buffers (the kernel-time tax of training steps), for
TensorFlow's tensors (its BFC pool) and for the rest of the process (glibc's settings)."""

import os
import subprocess
import sys

import pytest

from tests.malloc_probe import probe
from tx_keras.runtime import allocator
from tx_keras.runtime.allocator import _glibc_mallopt


def _probe(choice: str | None, size: int = 48 << 20, in_thread: bool = False) -> tuple[int, str]:
    """Faults of nine rounds of freeing and reallocating `size` bytes after `configure_allocator()`, as a
    command calls it, and the allocator account it gives."""
    faults, account = probe(
        "from tx_keras.runtime.allocator import configure_allocator\nconfigure_allocator()",
        size,
        choice,
        after="print(configure_allocator())",
        in_thread=in_thread,
    )[-2:]
    return int(faults), account


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_default_keeps_freed_buffers_so_steps_stop_faulting():
    faults, account = _probe(None)
    assert faults < 500, faults  # 9 x 48 MB would be ~110,000 faults of 4 KiB pages
    assert "mmap and trimming off" in account


_TENSOR_ROUNDS = """
import os, resource
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
from tx_keras.runtime.allocator import configure_allocator
account = configure_allocator()
import tensorflow as tf

@tf.function
def rounds(cache):  # beam search's reordering: the (rows, ...) cache gathered anew at every step
    rows = tf.shape(cache)[0]
    def step(i, cache):
        reordered = tf.gather(cache, tf.math.floormod(tf.range(rows) + i, rows))
        return i + 1, tf.ensure_shape(reordered, cache.shape)
    return tf.reduce_sum(tf.while_loop(lambda i, c: i < 9, step, (0, cache))[1][:, :1])

cache = tf.ones([320, 65536])  # 80 MB
rounds(cache)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(cache)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(tf.config.experimental.get_memory_info("CPU:0")["peak"] if "BFC" in account else 0)
print(account)
"""


def _tensor_rounds(choice: str | None) -> tuple[int, int, str]:
    """Faults of a decoding loop that gathers an 80 MB cache anew at each of 9 steps, the CPU pool's peak
    bytes (0 off the pool) and the allocator account, in a fresh process with TX_KERAS_ALLOCATOR=`choice`
    (None: the default). oneDNN is off, as on the AVX2 kind: on, TensorFlow's oneDNN allocator pools large
    tensors itself whatever the setting, and the test would say nothing about the kind where it does not."""
    drop = ("TX_KERAS_ALLOCATOR", "TF_CPU_ALLOCATOR_USE_BFC")
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"TF_ENABLE_ONEDNN_OPTS": "0"}
    if choice is not None:
        env["TX_KERAS_ALLOCATOR"] = choice
    done = subprocess.run(
        [sys.executable, "-c", _TENSOR_ROUNDS], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    faults, peak, account = done.stdout.splitlines()[-3:]
    return int(faults), int(peak), account


@pytest.mark.slow  # a process filling 64 MB tensors: ~40 s loaded
def test_default_keeps_tensors_over_64_mb_in_tensorflows_pool():
    """glibc serves threads other than the main one (TensorFlow's op threads) from arenas of 64 MB heaps
    and maps anything larger anew, whatever M_MMAP_MAX says: a decoding cache of 512 rows x 70 positions
    at d_model 256 is 70 MiB, which made evaluation spend half its CPU in the kernel. TensorFlow's BFC
    pool keeps such a tensor's memory for the next step, whichever thread asks."""
    faults, peak, account = _tensor_rounds(None)
    assert "TensorFlow's BFC pool for CPU tensors" in account
    assert peak >= 80 << 20, peak  # the tensors came from the pool
    assert faults < 2000, faults  # 9 x 80 MB faulted in anew would be ~184,000 pages of 4 KiB


@pytest.mark.slow  # a process filling 64 MB tensors: ~42 s loaded
@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_system_switch_leaves_tensors_to_tensorflows_own_allocator():
    faults, _, account = _tensor_rounds("system")
    assert "TX_KERAS_ALLOCATOR=system" in account
    assert faults > 9 * (80 << 20) // 4096 // 2, faults  # every step faults its cache in again


def test_a_users_pool_variable_wins():
    code = (
        "import os\nfrom tx_keras.runtime.allocator import configure_allocator\n"
        "print(configure_allocator())\nprint(os.environ['TF_CPU_ALLOCATOR_USE_BFC'])"
    )
    env = {**os.environ, "TF_CPU_ALLOCATOR_USE_BFC": "false"}
    env.pop("TX_KERAS_ALLOCATOR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    account, variable = out.stdout.splitlines()[-2:]
    assert "TensorFlow's own CPU allocator (TF_CPU_ALLOCATOR_USE_BFC=false)" in account
    assert variable == "false"


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_system_switch_leaves_glibc_as_it_is():
    faults, account = _probe("system")
    assert faults > 9 * (48 << 20) // 4096 // 2, faults  # every round faults its pages in again
    assert "TX_KERAS_ALLOCATOR=system" in account


def test_bfc_switch_sets_tensorflow_variable_before_it_starts():
    code = (
        "import os\nfrom tx_keras.runtime.allocator import configure_allocator\nconfigure_allocator()\n"
        "print(os.environ.get('TF_CPU_ALLOCATOR_USE_BFC'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}  # the tests' own set it
    env["TX_KERAS_ALLOCATOR"] = "bfc"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "true"


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_unknown_choice_is_named_and_changes_nothing():
    faults, account = _probe("jemalloc")
    assert "unknown TX_KERAS_ALLOCATOR='jemalloc'" in account and "tuned, bfc, system" in account
    assert faults > 9 * (48 << 20) // 4096 // 2, faults  # glibc as it was: every round faults again


def test_the_account_names_what_the_pool_holds_on_each_backend(monkeypatch):
    """A JAX run's tensors are XLA's, not TensorFlow's: its account says the pool holds tf.data's batches;
    without TensorFlow it names no pool. (The pool part alone: no mallopt in the tests' process.)"""
    monkeypatch.setenv("TF_CPU_ALLOCATOR_USE_BFC", "true")
    assert allocator._tensorflow_pool("tensorflow") == "TensorFlow's BFC pool for CPU tensors"
    on_jax = allocator._tensorflow_pool("jax")
    assert on_jax == "TensorFlow's BFC pool for tf.data's CPU tensors (jax's arrays: XLA's own allocator)"
    monkeypatch.setattr(allocator, "tensorflow_installed", lambda: False)
    assert allocator._tensorflow_pool("jax") == "no TensorFlow pool (TensorFlow is not installed)"
