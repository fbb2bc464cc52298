"""The pages a user reads: each machine kind's table in docs/performance.md is what `tx-bench --markdown`
renders from docs/bench/KIND/*.json, the pages stay short and current (no lab notebook: sizes, clock
times), every decision record is short and indexed, and the code's comments carry no dates."""

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from tx_keras.benchmark.markdown_table import markdown, row_ratios
from tx_keras.cli.bench import main

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
# A clock time on a page: "14:14 UTC", "2026-12-05 14:14". Durations (0:31, 28:27) are not stamps.
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*UTC\b|\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_docs_tables_are_rendered_from_their_json(capsys):
    """Each machine kind's table in docs/performance.md is exactly what `tx-bench --markdown` renders from
    its docs/bench/KIND/*.json, and every ratio in it is the ratio of its rows."""
    page = (DOCS / "performance.md").read_text()
    kinds = sorted(folder for folder in (DOCS / "bench").iterdir() if list(folder.glob("*.json")))
    assert {kind.name for kind in kinds} >= {"zen4", "zen5", "zen1", "amx"}
    for kind in kinds:
        files = sorted(kind.glob("*.json"))
        main(["--markdown", *map(str, files)])
        table = capsys.readouterr().out.strip()
        runs = [json.loads(path.read_text()) for path in files]
        assert table == markdown(runs)
        assert table in page, f"docs/performance.md does not show docs/bench/{kind.name} as rendered"
        assert not CLOCK_TIME.search(table), "a table names the day of its runs, not the time"
        for block in (block for run in runs for block in run["blocks"]):
            rows = block["rows"]
            for name in set(rows) - {"ours"}:
                ratio = row_ratios(rows, name)
                assert ratio["wall"] == pytest.approx(
                    rows["ours"]["tokens_per_s"] / rows[name]["tokens_per_s"]
                )
                assert f"| {ratio['cpu']:.2f}x" in table and f"| {ratio['wall']:.2f}x" in table


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def test_pages_are_short():
    """README at most 12 KB, each page of docs/ at most 30 KB, each decision record at most 4 KB."""
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024
    sizes = {page.name: len(page.read_bytes()) for page in sorted(DOCS.glob("*.md"))}
    assert all(size <= 30 * 1024 for size in sizes.values()), sizes
    records = sorted((DOCS / "decisions").glob("*.md"))
    assert len(records) >= 12
    assert all(len(record.read_bytes()) <= 4 * 1024 for record in records), [
        (record.name, len(record.read_bytes())) for record in records
    ]


def test_pages_carry_at_most_three_clock_times():
    stamps = [
        (page.name, stamp.group()) for page in _pages() for stamp in CLOCK_TIME.finditer(page.read_text())
    ]
    assert len(stamps) <= 3, stamps


def test_every_decision_record_is_indexed_and_every_link_resolves():
    """The index lists every record, and every relative link of the README, the pages and the records
    points at a file that exists."""
    index = (DOCS / "decisions" / "README.md").read_text()
    for record in (DOCS / "decisions").glob("*.md"):
        if record.name != "README.md":
            assert f"({record.name})" in index, f"docs/decisions/README.md does not list {record.name}"
    for page in [*_pages(), *sorted((DOCS / "decisions").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http://", "https://", "mailto:")):
                assert (page.parent / target).exists(), f"{page.name} links to a missing {target}"


def _comments_and_docstrings(source: str) -> list[str]:
    """A module's comments and docstrings: what a reader takes for the code's explanation (data strings,
    such as the claims' record of when each rule changed, are not)."""
    texts = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            texts.append(ast.get_docstring(node) or "")
    return texts


def test_code_comments_carry_no_history():
    """A figure lives in the decision record a comment names, not in a dated comment."""
    dates = [
        (str(path.relative_to(ROOT)), date.group())
        for path in sorted((ROOT / "tx_keras").rglob("*.py"))
        for text in _comments_and_docstrings(path.read_text())
        for date in DATE.finditer(text)
    ]
    assert len(dates) <= 2, dates


def test_code_paths_the_pages_name_exist():
    """A page that names `tx_keras/...py` or `tests/...py` names a file that exists."""
    for page in [*_pages(), *sorted((DOCS / "decisions").glob("*.md"))]:
        for path in re.findall(r"\b((?:tx_keras|tests|conf)/[\w/]+\.(?:py|yaml))\b", page.read_text()):
            assert (ROOT / path).exists(), f"{page.name} names a missing {path}"
