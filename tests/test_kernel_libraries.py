"""The golden-fixture, decoding and export tests once more, under the other oneDNN setting.

TensorFlow turns its oneDNN kernels on by default on AVX-512 (VNNI/BF16) CPUs and off on AVX2-only ones, and
the two libraries sum in different orders. Running these tests a second time with `TF_ENABLE_ONEDNN_OPTS`
flipped makes a run on either machine kind see two summation orders, so a tolerance that holds on one
kernel library only (tests/float_tolerance.py) fails here and not on a user's machine. In `pytest -m slow`:
the default run already meets both libraries across CI's two machine kinds, one per run.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ahead import ahead_fixture, needs
from tests.conftest import share_with_child
from tx_keras.benchmark.machine import ONEDNN_STATES, onednn_enabled

ROOT = Path(__file__).parent.parent
# What compares floats against fixtures or across code paths; from the export tests the one that compares a
# SavedModel's logits and translations with the in-process model's (the others check files and messages, and
# would add ~70 s of exports to the default run).
TESTS = [
    "tests/test_decoding_reference.py",
    "tests/test_decoding.py",
    "tests/test_models.py::test_a_model_keras_file_saved_with_flat_knobs_still_loads_with_the_same_logits",
    "tests/test_models.py::test_transformer_keras_file_round_trip",
    "tests/test_export.py::test_fresh_process_without_tx_keras_translates_like_the_in_process_model",
]


@ahead_fixture
def other_kernel_library(folder: Path) -> tuple[bool, subprocess.CompletedProcess, list[str]]:
    """The tests below in a child pytest, started ahead: they read this session's tiny run and copy model
    (their fixtures) instead of training them once more. (Whether the other library is oneDNN, the child's
    result, and what the child trained: nothing, it should be.)"""
    other = onednn_enabled() is False  # "unknown" counts as on: then the run below turns it off
    shared = share_with_child(folder, needs("tiny_run"), needs("copy_model"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={folder / 'inner'}",
         "-m", "not slow", *TESTS],
        cwd=ROOT,
        env={**os.environ, **shared, "TF_ENABLE_ONEDNN_OPTS": "1" if other else "0"},
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    made = [*(folder / "inner").glob("tiny_run*/*"), *(folder / "inner").glob("copy_model*/*")]
    trained = sorted(str(path.relative_to(folder)) for path in made)
    return other, result, trained


@pytest.mark.slow  # a second pytest over these tests: ~70 CPU-s, the last setup the default run waited for
def test_fixture_decoding_and_export_tests_pass_with_the_other_kernel_library(other_kernel_library):
    """What they compare (the decoders with each other, the SavedModel's logits and translations with the
    in-process model's) all runs under the other kernel library, whichever library trained the weights."""
    other, result, trained = other_kernel_library
    assert f"oneDNN {ONEDNN_STATES[other]}" in result.stdout, result.stdout[:2000]  # the flip took effect
    assert result.returncode == 0, result.stdout[-4000:]
    assert trained == [], trained  # the child read the parent's tiny run and copy model, trained none
