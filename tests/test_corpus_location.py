"""resolve_corpus: local paths, one cached download per URL (file:// and a local HTTP server, no network),
checksums, and the one-line errors."""

import hashlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tx_keras.data import corpus_location
from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.corpus_location import cache_name, resolve_corpus
from tx_keras.user_error import UserError

BODY = "Go.\tVa\u202f!\nHi.\tSalut !\n".encode() * 200
DIGEST = hashlib.sha256(BODY).hexdigest()
OTHER = "0" * 64


class _Server:
    """An HTTP server on 127.0.0.1 with fixed routes that counts the requests it answers."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # the name http.server dispatches to
                server.requests.append(self.path)
                status, headers, body = server.routes.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for key, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    running = _Server()
    running.routes["/data/fra-eng.tsv"] = (200, {}, BODY)
    yield running
    running.close()


def _files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


def _error(*args, **kwargs) -> str:
    with pytest.raises(CorpusError) as error:
        resolve_corpus(*args, **kwargs)
    assert isinstance(error.value, UserError)
    message = str(error.value)
    assert "\n" not in message
    return message


# --- local paths ------------------------------------------------------------------------------------------


def test_local_path_absolute_relative_and_home(tmp_path, monkeypatch):
    corpus = tmp_path / "eng-fra.tsv"
    corpus.write_bytes(BODY)
    assert resolve_corpus(str(corpus)) == corpus
    monkeypatch.chdir(tmp_path)
    assert resolve_corpus("eng-fra.tsv") == corpus
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_corpus("~/eng-fra.tsv") == corpus
    assert resolve_corpus(str(corpus), sha256=DIGEST.upper()) == corpus


def test_local_path_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.tsv").write_bytes(b"")
    (tmp_path / "corpus.tsv").write_bytes(BODY)
    assert _error("missing.tsv") == f"data.path=missing.tsv ({tmp_path / 'missing.tsv'}): no such file"
    assert _error(str(tmp_path / "missing.tsv")) == f"data.path={tmp_path / 'missing.tsv'}: no such file"
    assert _error(str(tmp_path)) == f"data.path={tmp_path}: is a folder, not a corpus file"
    assert _error(str(tmp_path / "empty.tsv")) == f"data.path={tmp_path / 'empty.tsv'}: the file is empty"
    assert _error("") == "data.path is empty; give a corpus file or an http(s):// or file:// URL"
    assert _error("ftp://example.org/x.tsv") == (
        "data.path=ftp://example.org/x.tsv: unsupported URL scheme ftp://; use http, https or file"
    )
    assert (
        _error("corpus.tsv", sha256="abc") == "sha256='abc' is not a SHA-256 digest (64 hexadecimal digits)"
    )
    # A user's own file is reported, never deleted.
    assert _error(str(tmp_path / "corpus.tsv"), sha256=OTHER) == (
        f"data.path={tmp_path / 'corpus.tsv'}: SHA-256 mismatch: expected {OTHER}, got {DIGEST}"
    )
    assert (tmp_path / "corpus.tsv").read_bytes() == BODY


# --- downloads --------------------------------------------------------------------------------------------


def test_cache_name_keeps_the_file_name_and_separates_urls():
    first = cache_name("https://www.manythings.org/anki/fra-eng.zip")
    second = cache_name("https://mirror.example.org/anki/fra-eng.zip")
    assert first.startswith("fra-eng-") and first.endswith(".zip") and len(first) == len("fra-eng-.zip") + 12
    assert first != second
    assert (
        cache_name("https://host/get?id=3")
        == f"get-{hashlib.sha256(b'https://host/get?id=3').hexdigest()[:12]}"
    )
    assert cache_name("https://host/").startswith("corpus-")
    assert cache_name("https://host/a%20b/..%2F..%2Fetc").startswith("etc-")


def test_file_url_is_copied_into_the_cache_once(tmp_path):
    source = tmp_path / "eng-fra.tsv"
    source.write_bytes(BODY)
    cache = tmp_path / "cache"
    url = source.as_uri()
    path = resolve_corpus(url, cache_dir=cache, sha256=DIGEST)
    assert path == cache / cache_name(url) and path.read_bytes() == BODY
    source.unlink()  # the second call must not read the URL again
    assert resolve_corpus(url, cache_dir=cache) == path
    assert _files(cache) == [path.name]


def test_http_download_once_with_a_progress_bar(server, tmp_path, capsys):
    url = f"{server.url}/data/fra-eng.tsv"
    cache = tmp_path / "cache"
    path = resolve_corpus(url, cache_dir=cache)
    assert path.read_bytes() == BODY and path.name.endswith(".tsv")
    assert path.name in capsys.readouterr().err  # tqdm's bar, on stderr
    assert resolve_corpus(url, cache_dir=cache, sha256=DIGEST) == path
    assert server.requests == ["/data/fra-eng.tsv"]
    assert _files(cache) == [path.name]


def test_default_cache_folder_is_tx_keras_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("TX_KERAS_CACHE", str(tmp_path / "env-cache"))
    url = f"{server.url}/data/fra-eng.tsv"
    assert resolve_corpus(url) == tmp_path / "env-cache" / cache_name(url)


def test_checksum_mismatch_removes_the_download(server, tmp_path):
    url = f"{server.url}/data/fra-eng.tsv"
    cache = tmp_path / "cache"
    message = _error(url, cache_dir=cache, sha256=OTHER)
    assert (
        message
        == f"data.path={url}: SHA-256 mismatch: expected {OTHER}, got {DIGEST}; the download was removed"
    )
    assert _files(cache) == []


def test_a_damaged_cached_copy_is_fetched_again(server, tmp_path):
    url = f"{server.url}/data/fra-eng.tsv"
    cache = tmp_path / "cache"
    path = resolve_corpus(url, cache_dir=cache)
    path.write_bytes(b"damaged\n")
    assert resolve_corpus(url, cache_dir=cache, sha256=DIGEST) == path
    assert path.read_bytes() == BODY and len(server.requests) == 2
    # A checksum that nothing matches: the cached copy is not trusted, and the new download is removed too.
    assert "SHA-256 mismatch" in _error(url, cache_dir=cache, sha256=OTHER)
    assert _files(cache) == []


def test_network_failures_are_one_line_and_leave_no_file(server, tmp_path):
    cache = tmp_path / "cache"
    server.routes["/short.tsv"] = (200, {"Content-Length": str(len(BODY) + 100)}, BODY)
    server.routes["/empty.tsv"] = (200, {}, b"")
    missing = f"{server.url}/missing.tsv"
    assert _error(missing, cache_dir=cache) == f"data.path={missing}: download failed: HTTP 404 Not Found"
    short = f"{server.url}/short.tsv"
    assert _error(short, cache_dir=cache).startswith(f"data.path={short}: download failed")
    empty = f"{server.url}/empty.tsv"
    assert _error(empty, cache_dir=cache) == f"data.path={empty}: the download is empty"
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/x.tsv"
    assert _error(closed, cache_dir=cache).startswith(f"data.path={closed}: download failed: ")
    gone = (tmp_path / "gone.tsv").as_uri()
    assert _error(gone, cache_dir=cache).startswith(f"data.path={gone}: download failed: ")
    assert _files(cache) == []


def test_an_interrupted_download_leaves_nothing_that_looks_complete(server, tmp_path, monkeypatch):
    def interrupt(self, n):
        raise KeyboardInterrupt

    monkeypatch.setattr(corpus_location.tqdm, "update", interrupt)
    with pytest.raises(KeyboardInterrupt):
        resolve_corpus(f"{server.url}/data/fra-eng.tsv", cache_dir=tmp_path / "cache")
    assert _files(tmp_path / "cache") == []
