"""Importing tx_keras leaves its host process as it was: TensorBoard imports the Attention plugin through its
entry point and notebooks import the layers, so no module may change the process's allocator on import
(the commands set it up themselves: test_allocator.py)."""

import subprocess
import sys
import warnings

import pytest

from tests.malloc_probe import probe
from tx_keras.runtime.allocator import _glibc_mallopt
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced

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
    assert (
        "tx_keras.runtime: allocator: TensorFlow's BFC pool for CPU tensors, glibc malloc with mmap and "
        "trimming off, an arena per thread"
    ) in log


def test_importing_the_library_leaves_the_warning_filters_as_they_were():
    """Keras's end-of-epoch "ran out of data" warning is silenced around tx-train's `fit` only: a notebook
    that imports the data pipeline and the models keeps its own warning filters."""
    code = (
        "import warnings; before = list(warnings.filters)\n"
        "import tx_keras.data.batching.pipeline, tx_keras.training.run, tx_keras.models.transformer\n"
        "added = [f for f in warnings.filters if f not in before]\n"
        "print([str(f[1].pattern) if f[1] else None for f in added if f[0] == 'ignore'])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ran out of data" not in result.stdout, result.stdout


def test_the_filter_holds_inside_the_block_only():
    """Inside: the end-of-epoch warning is dropped, any other still shown; after: the filters as before."""
    before = list(warnings.filters)
    with epoch_end_warning_silenced(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        warnings.warn("Your input ran out of data; interrupting training.", UserWarning, stacklevel=1)
        warnings.warn("something else", ResourceWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["something else"]
    assert warnings.filters == before
