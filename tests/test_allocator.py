"""The allocator setting: applied on `import tx_keras`, switchable by TX_KERAS_ALLOCATOR, and it removes the
page faults of freeing and reallocating large buffers (the kernel-time tax of training steps)."""

import os
import subprocess
import sys

import pytest

from tx_keras.runtime.allocator import _glibc_mallopt

# In a fresh process: import tx_keras, then free and reallocate a 48 MB buffer ten times, touching every
# page, as a training step does with its logits; print the minor page faults of the last nine rounds.
_PROBE = """
import ctypes, resource, tx_keras
from tx_keras.runtime.allocator import configure_allocator
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
size = 48 << 20
def step():
    buffer = libc.malloc(size)
    ctypes.memset(buffer, 1, size)
    libc.free(buffer)
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(9):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(configure_allocator())
"""


def _probe(choice: str | None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TX_KERAS_ALLOCATOR", "TF_CPU_ALLOCATOR_USE_BFC")}
    if choice is not None:
        env["TX_KERAS_ALLOCATOR"] = choice
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    return int(out[-2]), out[-1]


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_default_keeps_freed_buffers_so_steps_stop_faulting():
    faults, account = _probe(None)
    assert faults < 500, faults  # 9 x 48 MB would be ~110,000 faults of 4 KiB pages
    assert "mmap and trimming off" in account


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_system_switch_leaves_glibc_as_it_is():
    faults, account = _probe("system")
    assert faults > 9 * (48 << 20) // 4096 // 2, faults  # every round faults its pages in again
    assert "TX_KERAS_ALLOCATOR=system" in account


def test_bfc_switch_sets_tensorflow_variable_before_it_starts():
    code = "import os, tx_keras; print(os.environ.get('TF_CPU_ALLOCATOR_USE_BFC'))"
    env = {**os.environ, "TX_KERAS_ALLOCATOR": "bfc"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "true"


def test_unknown_choice_is_named_and_changes_nothing():
    faults, account = _probe("jemalloc")
    assert "unknown TX_KERAS_ALLOCATOR='jemalloc'" in account and "tuned, bfc, system" in account
