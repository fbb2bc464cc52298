"""The preparation pass of a streamed corpus in several worker processes: byte ranges that hold every line
once, and a prepared corpus that does not depend on how many processes read it."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.corpus_ranges import corpus_ranges, range_lines
from tx_keras.data.prepared_corpus import prepare_corpus


def _lines(path: Path, pieces: int) -> list[bytes]:
    lines = []
    for piece in corpus_ranges([path], None, pieces):
        with range_lines(piece) as stream:
            lines += list(stream)
    return lines


@pytest.mark.parametrize("ending", [b"\n", b""])
def test_every_line_is_in_exactly_one_range_wherever_the_cuts_fall(tmp_path, ending):
    rows = b"".join(b"x" * (i % 7) + b"\ty\r\n" for i in range(40))
    data = b"\xef\xbb\xbfGo.\tVa !\n\n" + rows + b"last" + ending
    path = tmp_path / "corpus.tsv"
    path.write_bytes(data)
    for pieces in (1, 2, 3, 7, 64, 500):  # 500 ranges: more than the file has lines, most of them empty
        assert _lines(path, pieces) == data.splitlines(keepends=True), pieces


def _corpus(path: Path, rows: int, offset: int) -> Path:
    """Pairs with a byte-order mark first, bad lines between, and sources with several translations (some
    adjacent, some far apart, so that a range boundary or a file boundary splits them)."""
    lines = ["\ufeffGo.\tVa !"]
    for i in range(rows):
        source = f"s{(i + offset) % (rows // 3)} w{i % 11}"
        lines.append(f"{source}\tt{i} {i % 5}")
        if i % 97 == 0:
            lines += ["no tab", "", " \t ", f"{source}\tt{i} bis"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _prepared(files: list[Path], cache: Path, workers: int):
    return prepare_corpus(
        files,
        cache,
        source_column=0,
        target_column=1,
        lowercase=True,
        max_words=None,
        member=None,
        num_validation=40,
        num_test=30,
        seed=3,
        sample_size=500,
        workers=workers,
    )


def test_three_worker_processes_prepare_the_corpus_one_process_prepares(tmp_path):
    files = [_corpus(tmp_path / "a.tsv", 3000, 0), _corpus(tmp_path / "b.tsv", 2000, 500)]
    one, three = (_prepared(files, tmp_path / f"cache-{n}", n) for n in (1, 3))
    assert one.counts == three.counts and one.pairs == three.pairs
    assert one.counts["malformed"] == 31 + 21 and one.counts["blank"] == 2 * (31 + 21)
    assert one.pairs["validation"] == 40 and one.pairs["test"] == 30
    assert sum(one.pairs.values()) == one.counts["kept"]
    names = sorted(path.name for path in one.folder.iterdir())
    assert names == sorted(path.name for path in three.folder.iterdir()) and len(names) == 64 + 4
    for name in names:
        if name != "meta.json":
            assert (one.folder / name).read_bytes() == (three.folder / name).read_bytes(), name
    assert [path.name for path in three.folder.parent.iterdir()] == [three.folder.name]  # no temp left
    assert one.texts("test")[0] != ("\ufeffgo.", "va !") and ("go.", "va !") in [
        pair for part in ("train", "validation", "test", "sample") for pair in _all(one, part)
    ]


def _all(prepared, part):
    if part != "train":
        return prepared.texts(part)
    return [tuple(line.rstrip("\n").split("\t")) for path in prepared.train_files for line in open(path)]


def test_an_error_in_a_worker_reaches_the_caller_and_leaves_no_parts(tmp_path):
    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as archive:
        archive.writestr("readme.md", "no corpus here")
    cache = tmp_path / "cache"
    with pytest.raises(CorpusError, match="no .txt/.tsv member"):
        _prepared([_corpus(tmp_path / "a.tsv", 600, 0), tmp_path / "notes.zip"], cache, 2)
    assert not cache.exists() or list(cache.iterdir()) == []


_SCRIPT = """
import sys
from pathlib import Path
from tx_keras.data.prepared_corpus import prepare_corpus

prepared = prepare_corpus([Path(sys.argv[1])], Path(sys.argv[2]), source_column=0, target_column=1,
    lowercase=False, max_words=None, member=None, num_validation=10, num_test=10, seed=0, sample_size=50,
    workers=2)
print(prepared.pairs["train"])
"""


def test_a_script_without_a_main_guard_can_prepare_with_workers(tmp_path):
    """Worker processes do not import the caller's __main__ again (multiprocessing's spawn would, and a
    script without `if __name__ == "__main__"` would start workers from its workers)."""
    script = tmp_path / "prepare.py"
    script.write_text(_SCRIPT)
    corpus = _corpus(tmp_path / "a.tsv", 600, 0)
    done = subprocess.run(
        [sys.executable, str(script), str(corpus), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) > 500
