"""read_parallel_corpus on small Anki-format files with every kind of bad line, plain and zipped: each line
kept or counted under one reason (the text rule's refusals included), the counts adding up to the lines."""

import zipfile

import pytest

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.parallel_corpus import CorpusReading, read_parallel_corpus

# One line of each kind, as bytes: the file is read as bytes and each line decoded on its own.
LINES = [
    # A byte order mark, typographic spaces, an attribution column, a CRLF ending.
    "\ufeffGo.\tVa\u202f!\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM)\r\n".encode(),
    "Hi.\tSalut\u00a0!\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM)\n".encode(),
    "Run!\tCours\u202f!\n".encode(),  # no attribution column
    "Run!\tCourez\u202f!\n".encode(),
    b"  Who?  \t  Qui   ?\n",  # extra spaces
    b"no tab on this line\n",  # malformed
    "Wow!\t\u200b \n".encode(),  # empty target after normalisation
    b"\tVide\n",  # empty source
    b"Caf\xe9\tCaf\xc3\xa9\n",  # Latin-1 byte: invalid UTF-8
    b"Bad\t\xff\xfe\n",  # invalid UTF-8
    b"\n",  # blank
    b"bad\x00line\tmit\x00null\n",  # NUL bytes (issue 65): refused, never learned into a vocabulary
    "Oops\u0085\tOups\n".encode(),  # a C1 control character: refused
    b"Hello there.\tBonjour \xc3\xa0 toi.\rBye now.\tAu revoir.\n",  # a lone CR ends a line (old Mac)
    b"I see it now.\tJe le vois maintenant.\n",  # 4 and 4 words
    "I'm done.\tJ\u2019ai fini.".encode(),  # last line without a newline
]
PAIRS = [
    ("Go.", "Va !"),
    ("Hi.", "Salut !"),
    ("Run!", "Cours !"),
    ("Run!", "Courez !"),
    ("Who?", "Qui ?"),
    ("Hello there.", "Bonjour \u00e0 toi."),
    ("Bye now.", "Au revoir."),
    ("I see it now.", "Je le vois maintenant."),
    ("I'm done.", "J\u2019ai fini."),
]
COUNTS = {
    "lines": 17,
    "kept": 9,
    "blank": 1,
    "malformed": 1,
    "invalid_utf8": 2,
    "control": 2,
    "empty": 2,
    "overlong": 0,
}


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "eng-fra.tsv"
    path.write_bytes(b"".join(LINES))
    return path


def _error(*args, **kwargs) -> str:
    with pytest.raises(CorpusError) as error:
        read_parallel_corpus(*args, **kwargs)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_bad_lines_are_counted_and_skipped(corpus):
    reading = read_parallel_corpus(corpus)
    assert isinstance(reading, CorpusReading)
    assert reading.pairs == PAIRS
    assert reading.counts == COUNTS
    assert sum(COUNTS.values()) - COUNTS["lines"] == COUNTS["lines"]  # each line under one outcome
    assert reading.report() == (
        "eng-fra.tsv: 17 lines, 9 pairs kept; "
        "skipped: 1 malformed, 2 invalid UTF-8, 2 with control characters, 2 empty, 0 overlong, 1 blank"
    )
    with pytest.raises(AttributeError):
        reading.pairs = []


def test_lowercase_and_max_words(corpus):
    reading = read_parallel_corpus(corpus, lowercase=True, max_words=3)
    assert reading.pairs == [
        (source.lower(), target.lower()) for source, target in PAIRS if source != "I see it now."
    ]
    assert reading.counts == {**COUNTS, "kept": 8, "overlong": 1}
    assert read_parallel_corpus(corpus, max_words=4).counts["overlong"] == 0  # exactly max_words is kept
    assert _error(corpus, max_words=1).endswith(
        "(17 lines: 1 malformed, 2 invalid UTF-8, 2 with control characters, 2 empty, 9 overlong, 1 blank)"
    )


def test_columns_are_chosen(corpus):
    reading = read_parallel_corpus(corpus, source_column=1, target_column=0)
    assert reading.pairs == [(target, source) for source, target in PAIRS]
    attributed = read_parallel_corpus(corpus, source_column=0, target_column=2)
    assert attributed.pairs[0] == ("Go.", "CC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM)")
    assert attributed.counts["kept"] == 2 and attributed.counts["malformed"] == 12


def test_no_valid_pair_is_an_error_with_the_counts(corpus, tmp_path):
    assert _error(corpus, target_column=5) == (
        f"{corpus}: no valid sentence pairs (17 lines: 14 malformed, 2 invalid UTF-8, 0 with control "
        "characters, 0 empty, 0 overlong, 1 blank); source_column=0 and target_column=5 need 6 tab-separated "
        "columns"
    )
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"a\t\n \tb\n\xff\tb\n")
    assert (
        _error(bad)
        == f"{bad}: no valid sentence pairs (3 lines: 0 malformed, 1 invalid UTF-8, 0 with control "
        "characters, 2 empty, 0 overlong)"
    )
    utf16 = tmp_path / "utf16.tsv"
    utf16.write_bytes("Go.\tVa !\nHi.\tSalut !\n".encode("utf-16"))
    assert _error(utf16).endswith(
        "; is the file UTF-8? (UTF-16 reads as NUL bytes, a legacy code page as invalid UTF-8)"
    )


def test_argument_and_file_errors(corpus, tmp_path):
    assert _error(corpus, source_column=-1) == "source_column=-1 must be >= 0"
    assert _error(corpus, max_words=0) == "max_words=0 must be >= 1"
    assert (
        _error(tmp_path / "missing.tsv")
        == f"{tmp_path / 'missing.tsv'}: cannot read: No such file or directory"
    )
    assert (
        _error(corpus, member="fra.txt")
        == f"{corpus}: member='fra.txt' is given but the file is not a zip archive"
    )
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"Go.\tVa !\n")
    assert _error(fake) == f"{fake}: not a valid zip archive"


def _zip(path, members):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_a_manythings_zip_is_read_in_place(tmp_path):
    about = b"Tatoeba attribution and terms of use.\n"
    archive = _zip(tmp_path / "fra-eng.zip", {"_about.txt": about, "fra.txt": b"".join(LINES)})
    reading = read_parallel_corpus(archive)
    assert reading.pairs == PAIRS and reading.counts == COUNTS
    assert reading.report().startswith("fra-eng.zip:fra.txt: 17 lines, 9 pairs kept;")
    assert read_parallel_corpus(archive, member="_about.txt", source_column=0, target_column=0).pairs == [
        ("Tatoeba attribution and terms of use.", "Tatoeba attribution and terms of use.")
    ]


def test_zip_member_errors(tmp_path):
    several = _zip(tmp_path / "several.zip", {"_about.txt": b"x", "fra.txt": b"a\tb\n", "deu.tsv": b"a\tb\n"})
    assert _error(several) == (
        f"{several}: several .txt/.tsv members, choose one with member=NAME "
        "(members: _about.txt, fra.txt, deu.tsv)"
    )
    assert read_parallel_corpus(several, member="deu.tsv").pairs == [("a", "b")]
    assert _error(several, member="ita.txt") == (
        f"{several}: has no member 'ita.txt' (members: _about.txt, fra.txt, deu.tsv)"
    )
    none = _zip(tmp_path / "none.zip", {"_about.txt": b"x", "__MACOSX/_fra.txt": b"x", "notes.md": b"x"})
    assert _error(none) == f"{none}: no .txt/.tsv member (members: _about.txt, __MACOSX/_fra.txt, notes.md)"
