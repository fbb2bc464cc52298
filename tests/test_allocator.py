"""The allocator setting: applied by `configure_allocator()` (the commands call it before TensorFlow starts;
importing tx_keras does not: test_import_side_effects.py), switchable by TX_KERAS_ALLOCATOR, and it removes
the page faults of freeing and reallocating large buffers (the kernel-time tax of training steps)."""

import os
import subprocess
import sys

import pytest

from tests.malloc_probe import probe
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


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_default_keeps_buffers_over_64_mb_of_other_threads_too():
    """glibc serves a thread other than the main one from an arena of 64 MB heaps and maps anything larger
    anew, whatever M_MMAP_MAX says: a decoding cache of 512 rows x 70 positions at d_model 256 is 70 MiB,
    which made evaluation spend half its CPU in the kernel. One arena for every thread keeps it."""
    faults, _ = _probe(None, 80 << 20, in_thread=True)
    assert faults < 500, faults  # 9 x 80 MB would be ~180,000 faults of 4 KiB pages


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
    env = {**os.environ, "TX_KERAS_ALLOCATOR": "bfc"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "true"


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_unknown_choice_is_named_and_changes_nothing():
    faults, account = _probe("jemalloc")
    assert "unknown TX_KERAS_ALLOCATOR='jemalloc'" in account and "tuned, bfc, system" in account
    assert faults > 9 * (48 << 20) // 4096 // 2, faults  # glibc as it was: every round faults again
