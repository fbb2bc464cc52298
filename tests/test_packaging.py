"""The installed package must hold every module and config file, not only an editable checkout."""

from pathlib import Path

import tomllib
from setuptools import find_namespace_packages

ROOT = Path(__file__).resolve().parents[1]


def test_every_source_package_is_listed_in_pyproject():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {
        name
        for name in find_namespace_packages(str(ROOT), include=["tx_keras*"])
        if "__pycache__" not in name and name != "hydra_plugins"
    }  # the namespace itself
    found |= {"tx_keras.conf", "tx_keras.sweeps"}  # mapped from conf/ and sweeps/ by package-dir
    assert listed == found


def test_config_and_sweep_folders_ship_their_yaml():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package, folder in setuptools["package-dir"].items():
        assert (ROOT / folder / "__init__.py").exists(), package
        assert setuptools["package-data"][package] == ["**/*.yaml"]
        assert list((ROOT / folder).rglob("*.yaml")), folder
