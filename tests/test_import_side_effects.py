"""Importing tx_keras leaves its host process as it was: TensorBoard imports the Attention plugin through its
entry point and notebooks import the layers, so no module may change the process on import (environment,
warning filters, loggers, thread pools, allocator); the commands set it up themselves (test_allocator.py)."""

import ast
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.ahead import ahead_fixture
from tests.malloc_probe import probe
from tx_keras.runtime.allocator import _glibc_mallopt
from tx_keras.runtime.ran_out_of_data import epoch_end_warning_silenced

ROOT = Path(__file__).resolve().parents[1]
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


# Run in a fresh interpreter: import the third-party packages tx_keras imports (their own import-time set-up
# is theirs), take the process's state, import the given modules, take it again, print what changed.
_PROBE = r"""
import importlib, json, logging, os, sys, warnings
modules, third_party = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in third_party:
    try:
        importlib.import_module(name)
    except ImportError:  # an optional extra (jax) that is not installed here
        pass


def _handlers(logger):
    return sorted(type(handler).__name__ for handler in logger.handlers)


def state():
    import keras
    import tensorflow as tf

    loggers = {
        name: [logger.level, logger.propagate, logger.disabled, _handlers(logger)]
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    root = logging.getLogger()
    loggers[""] = [root.level, True, root.disabled, _handlers(root)]
    threads = [
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
    ]
    return {
        "environ": dict(os.environ),
        "filters": list(warnings.filters),
        "loggers": loggers,
        "threads": threads,
        "policy": keras.mixed_precision.global_policy().name,
    }


before = state()
failed = []
for module in modules:
    try:
        importlib.import_module(module)
    except ImportError as error:  # a module of an optional extra
        failed.append(f"{module}: {error}")
after = state()
environ = sorted(key for key in before["environ"].keys() | after["environ"].keys()
                 if before["environ"].get(key) != after["environ"].get(key))
# A library's filter for its own warning class is that library's set-up (statsmodels, scipy and urllib3 add
# theirs when a submodule of theirs is first imported); any other new filter is a change.
filters = [repr(f) for f in after["filters"] if f not in before["filters"]
           and (f[2].__module__ in ("builtins", "warnings") or f[2].__module__.startswith("tx_keras"))]
unset = [logging.NOTSET, True, False, []]
loggers = sorted(name for name, value in after["loggers"].items()
                 if value != before["loggers"].get(name, unset)
                 and not (not name.startswith("tx_keras") and value[:3] == unset[:3]
                          and set(value[3]) <= {"NullHandler"}))  # a library's NullHandler: its convention
print(json.dumps({"imported": len(modules) - len(failed), "failed": failed, "environ": environ,
                  "filters": filters, "loggers": loggers,
                  "threads": [before["threads"], after["threads"]],
                  "policy": [before["policy"], after["policy"]]}))
"""
SOURCES = {"tx_keras": ROOT / "tx_keras", "tx_keras.conf": ROOT / "conf"}


def every_module() -> tuple[list[str], list[str]]:
    """(every module of tx_keras and its config tree, the third-party packages they import)."""
    modules, third_party = [], set()
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            modules.append(".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts))))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    third_party.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    third_party.add(node.module.split(".")[0])
    return modules, sorted(third_party - {"tx_keras"} - set(sys.stdlib_module_names))


def _probe(modules: list[str], third_party: list[str], path: Path = ROOT) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(ROOT)])}
    command = [sys.executable, "-c", _PROBE, json.dumps(modules), json.dumps(third_party)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@ahead_fixture
def every_module_probed(folder: Path) -> dict:
    """The probe's findings for every module of tx_keras, in a fresh interpreter."""
    return _probe(*every_module())


def test_importing_every_module_changes_nothing_in_the_process(every_module_probed):
    """Environment, warning filters, logger levels and handlers, TensorFlow's thread pools and Keras' dtype
    policy are the same before and after importing every tx_keras module (the commands set up what they
    need when they run: runtime/quiet_startup.py, runtime/allocator.py, cli/train.py)."""
    modules, _ = every_module()
    assert len(modules) > 200  # the walk found the package
    found = every_module_probed
    assert found["failed"] == [] and found["imported"] == len(modules)
    assert found["environ"] == [] and found["filters"] == [] and found["loggers"] == []
    assert found["threads"][0] == found["threads"][1] and found["policy"][0] == found["policy"][1]


@ahead_fixture
def noisy_module_probed(folder: Path) -> dict:
    """The probe's findings for a module that sets a variable, a filter and a logger level on import."""
    (folder / "noisy_module.py").write_text(
        "import logging, os, warnings\n"
        "os.environ['TX_KERAS_NOISY'] = '1'\n"
        "warnings.filterwarnings('ignore', message='.*ran out of data')\n"
        "logging.getLogger('tx_keras.noisy').setLevel(logging.ERROR)\n"
    )
    return _probe(["noisy_module"], [], path=folder)


def test_the_probe_sees_a_module_that_changes_the_process(noisy_module_probed):
    """The check itself: such a module is caught."""
    found = noisy_module_probed
    assert found["imported"] == 1
    assert found["environ"] == ["TX_KERAS_NOISY"]
    assert len(found["filters"]) == 1 and "ran out of data" in found["filters"][0]
    assert found["loggers"] == ["tx_keras.noisy"]


def test_the_filter_holds_inside_the_block_only():
    """Inside: the end-of-epoch warning is dropped, any other still shown; after: the filters as before."""
    before = list(warnings.filters)
    with epoch_end_warning_silenced(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        warnings.warn("Your input ran out of data; interrupting training.", UserWarning, stacklevel=1)
        warnings.warn("something else", ResourceWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["something else"]
    assert warnings.filters == before
