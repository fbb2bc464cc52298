"""Importing tx_keras leaves its host process as it was: TensorBoard imports the Attention plugin through its
entry point and notebooks import the layers, so no module may change the process's allocator on import
(the commands set it up themselves: test_allocator.py)."""

import pytest

from tests.malloc_probe import probe
from tx_keras.runtime.allocator import _glibc_mallopt

MODULES = ("tx_keras", "tx_keras.layers", "tx_keras.models.transformer", "tx_keras.explorer.plugin")


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_importing_the_library_leaves_glibc_malloc_as_it_was():
    """After the imports, in a fresh interpreter with the default TX_KERAS_ALLOCATOR: configure_allocator
    never ran, and 48 MB buffers are still mapped anew each round (the system's malloc; with the suite's
    setting applied they stay in the heap and the rounds fault under 500 pages: test_allocator.py)."""
    setup = "\n".join(f"import {module}" for module in MODULES) + "\nfrom tx_keras.runtime import allocator"
    faults, applied = probe(setup, 48 << 20, None, after="print(allocator.applied())")[-2:]
    assert applied == "allocator: the system's as it is (not configured in this process)"
    assert int(faults) > 9 * (48 << 20) // 4096 // 2, faults  # every round faults its pages in again


@pytest.mark.skipif(_glibc_mallopt() is None, reason="needs glibc")
def test_tx_train_sets_the_allocator_up_itself(tiny_run):
    """What importing no longer does, the command does: the run's train.log says tx-train applied it."""
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    log = (run_dir / "train.log").read_text()
    assert "tx_keras.runtime: allocator: glibc malloc, one arena, mmap and trimming off" in log
