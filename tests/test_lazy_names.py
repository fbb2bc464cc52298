"""The packages whose public names load on first use (`tx_keras.lazy_names`): importing the package loads
none of its modules, every name it publishes resolves to its module's object, and any other is an
AttributeError naming the package."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PUBLISHED = {
    "tx_keras.data": ["TASKS", "Task", "Vocabulary", "build_task", "make_dataset"],
    "tx_keras.export": [
        "ExportSettings",
        "NotARunError",
        "Translator",
        "WordCodec",
        "export_model",
        "export_run",
    ],
    "tx_keras.models": ["Decoder", "DecoderBlock", "Encoder", "EncoderBlock", "ModelConfig", "Transformer"],
}


def test_importing_a_package_loads_none_of_its_modules():
    probe = (
        "import sys\n"
        f"packages = {sorted(PUBLISHED)!r}\n"
        "for package in packages:\n"
        "    __import__(package)\n"
        "print(sorted(m for m in sys.modules if any(m.startswith(p + '.') for p in packages)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize("package", sorted(PUBLISHED))
def test_every_published_name_resolves_in_its_module(package):
    module = importlib.import_module(package)
    assert module.__all__ == PUBLISHED[package]
    for name in module.__all__:
        value = getattr(module, name)
        defined_in = getattr(value, "__module__", None)
        if defined_in is None:  # TASKS: a list, found all the same
            continue
        assert defined_in.startswith(f"{package}."), (name, defined_in)
        assert vars(sys.modules[defined_in])[name] is value
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'Missing'"):
        module.Missing  # noqa: B018
