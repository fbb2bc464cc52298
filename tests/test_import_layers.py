"""One direction of imports: a lower package never names a higher one, at the top of a module or inside a
function. The order is written once, here; a new package or top-level module must be placed in it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. A module may import its own level and the levels below it. "" is the package root.
LEVELS: tuple[tuple[str, ...], ...] = (
    # Leaves with no model code: errors, tokens, the component table, the config field rules, run-folder
    # files, figures, the process (engine, threads, allocator, warnings), the argmax of scores.
    (
        "",
        "user_error",
        "special_tokens",
        "lazy_names",
        "components",
        "norm_placement",
        "most_likely",
        "config_rules",
        "runtime",
        "run_folder",
        "plots",
    ),
    ("kernels",),  # the measured fast paths the layers use as they would any Keras layer
    ("layers",),
    ("models", "data"),
    ("decoding", "diagnostics"),
    ("export", "evaluation"),
    # The run: its config tree, the checks, the step, the processes, the callbacks and the job above them.
    ("training", "conf"),
    # Consumers of runs: the benchmark, the comparisons and claims, the TensorBoard plugin, Hydra's callbacks.
    ("benchmark", "comparison", "claims", "explorer", "launch"),
    ("cli",),  # the commands, one module each
)
LEVEL = {unit: level for level, units in enumerate(LEVELS) for unit in units}
# Where each installed package's sources live (conf/ installs as tx_keras.conf).
SOURCES = {"tx_keras": ROOT / "tx_keras", "tx_keras.conf": ROOT / "conf"}


def _module_name(path: Path) -> str:
    for package, folder in SOURCES.items():
        if folder in path.parents:
            parts = path.relative_to(folder).with_suffix("").parts
            return ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))
    raise ValueError(path)


def _unit(name: str, units: set[str]) -> str | None:
    """The package or top-level module of tx_keras that `name` belongs to; "" for the root (or a name
    defined in it, like `__version__`); None outside tx_keras."""
    parts = name.split(".")
    if parts[0] != "tx_keras":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in units else ""


def imported_names(source: str, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """(dotted name, line) of every import in `source`, function-local and relative ones included;
    `from P import n` gives `P.n`, which is a module when n is one."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield from ((f"{base}.{alias.name}", node.lineno) for alias in node.names)


def back_edges(files: dict[Path, str], units: set[str]) -> list[str]:
    """Each import of a higher level (or of a package the order does not place), as one readable line."""
    found = []
    for path, source in sorted(files.items()):
        module = _module_name(path)
        unit = _unit(module, units)
        for name, line in imported_names(source, module, path.name == "__init__.py"):
            target = _unit(name, units)
            if target is None or target == unit:
                continue
            if unit not in LEVEL or target not in LEVEL:
                missing = unit if unit not in LEVEL else target
                found.append(f"{path.relative_to(ROOT)}:{line}: {missing!r} is not placed in LEVELS")
            elif LEVEL[target] > LEVEL[unit]:
                found.append(
                    f"{path.relative_to(ROOT)}:{line}: {unit or 'tx_keras'} (level {LEVEL[unit]}) imports "
                    f"{name} ({target}, level {LEVEL[target]})"
                )
    return found


def _units() -> set[str]:
    folder = SOURCES["tx_keras"]
    return (
        {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
        | {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        | {"conf"}
    )


def _sources() -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8") for folder in SOURCES.values() for path in folder.rglob("*.py")
    }


def test_every_package_and_top_level_module_has_a_level():
    assert sorted(_units() - set(LEVEL)) == [], "place it in LEVELS (tests/test_import_layers.py)"
    assert sorted(set(LEVEL) - _units() - {""}) == [], "LEVELS names a package that no longer exists"


def test_no_module_imports_a_higher_level():
    sources = _sources()
    assert len(sources) > 150  # the walk found the package, not an empty folder
    assert back_edges(sources, _units()) == []


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("tx_keras/layers/x.py", "from tx_keras.models import ModelConfig\n", "imports tx_keras.models."),
        ("tx_keras/layers/x.py", "def f():\n    import tx_keras.decoding.greedy\n", "x.py:2: layers"),
        ("tx_keras/data/x.py", "from ..training import choices\n", "imports tx_keras.training.choices"),
        ("tx_keras/training/x.py", "from tx_keras import explorer\n", "imports tx_keras.explorer"),
        ("tx_keras/models/x.py", "import tx_keras.newpackage.thing\n", "'newpackage' is not placed"),
    ],
)
def test_the_walk_finds_a_back_edge(path: str, source: str, expected: str):
    """The checker itself: top-level, function-local and relative imports of a higher level are found."""
    units = _units() | {"newpackage"}
    [edge] = back_edges({ROOT / path: source}, units)
    assert expected in edge, edge


def test_the_blocks_leave_the_machine_to_the_kernels():
    """The lecture's blocks read as the lecture: what depends on the CPU (runtime/: its flags, thread pools)
    is read by the kernels they use, never by a block itself."""
    layers = SOURCES["tx_keras"] / "layers"
    reads = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path, source in _sources().items()
        if layers in path.parents
        for name, line in imported_names(source, _module_name(path), path.name == "__init__.py")
        if _unit(name, _units()) == "runtime"
    ]
    assert reads == []


def test_only_the_job_imports_the_run_orchestrator():
    """training/run/orchestrator.py imports every package below the commands: a module that needs one of its
    pieces (tx-bench's real path needed compile_model) imports that piece's own module instead."""
    importers = {
        _module_name(path)
        for path, source in _sources().items()
        for name, _ in imported_names(source, _module_name(path), path.name == "__init__.py")
        if name.startswith("tx_keras.training.run.orchestrator")
    }
    assert importers == {"tx_keras.training.run.job"}


def test_the_walk_allows_imports_downwards_and_within_a_level():
    sources = {
        ROOT / "tx_keras/models/x.py": "from tx_keras.layers import AddNorm\nimport tx_keras.components\n",
        ROOT / "tx_keras/training/x.py": "from tx_keras.export.run_export import save_and_export\n",
        ROOT / "tx_keras/run_folder/x.py": "from tx_keras import __version__\nfrom . import summary\n",
    }
    assert back_edges(sources, _units()) == []
