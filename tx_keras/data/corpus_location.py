"""Turns `data.path` (a local file or a URL) into a local file, downloading a URL once into a cache.

A run must not depend on the network after the first download, nor trust a half-written file: a download
goes to a temporary file that is renamed into the cache only once it is complete (and matches its SHA-256
when one is given), so a killed run leaves nothing that a later run would mistake for the corpus.
"""

import hashlib
import http.client
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from tx_keras.data.corpus_error import CorpusError
from tx_keras.run_folder.atomic_write import atomic_file

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SCHEMES = ("http", "https", "file")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20
_TIMEOUT_S = 60
# Some corpus hosts refuse urllib's default "Python-urllib/x.y" agent.
_USER_AGENT = "tx_keras/0.1 (corpus download)"


def resolve_corpus(location: str, cache_dir: str | Path | None = None, sha256: str | None = None) -> Path:
    """The local file holding the corpus at `location` (a path, or an http(s):// or file:// URL).

    A path (`~` expanded, relative to the current directory) must be a non-empty file. A URL is downloaded
    into `cache_dir` (default: $TX_KERAS_CACHE, else ~/.cache/tx_keras/corpora) on first use and read from
    there afterwards. `sha256`, when given, is checked against the file; a cached copy that fails the check is
    fetched again, a download that fails it is removed. Every failure is a one-line CorpusError.
    """
    expected = _checked_digest(sha256)
    match = _URL.match(location)
    if match is None:
        path = _local_file(location)
        if expected is not None and (actual := _file_digest(path)) != expected:
            raise CorpusError(_mismatch(location, expected, actual))
        return path
    scheme = match.group(1).lower()
    if scheme not in _SCHEMES:
        raise CorpusError(
            f"data.path={location}: unsupported URL scheme {scheme}://; use http, https or file"
        )
    return _cached_download(location, cache_folder(cache_dir), expected)


def _checked_digest(sha256: str | None) -> str | None:
    if sha256 is None:
        return None
    digest = sha256.strip().lower()
    if not _SHA256.match(digest):
        raise CorpusError(f"sha256={sha256!r} is not a SHA-256 digest (64 hexadecimal digits)")
    return digest


def _local_file(location: str) -> Path:
    if not location.strip():
        raise CorpusError("data.path is empty; give a corpus file or an http(s):// or file:// URL")
    path = Path(location).expanduser().absolute()
    shown = location if str(path) == location else f"{location} ({path})"
    if not path.exists():
        raise CorpusError(f"data.path={shown}: no such file")
    if path.is_dir():
        raise CorpusError(f"data.path={shown}: is a folder, not a corpus file")
    if path.stat().st_size == 0:
        raise CorpusError(f"data.path={shown}: the file is empty")
    return path


def cache_folder(cache_dir: str | Path | None) -> Path:
    """The cache folder: `cache_dir`, else $TX_KERAS_CACHE, else ~/.cache/tx_keras/corpora."""
    if cache_dir is None:
        cache_dir = os.environ.get("TX_KERAS_CACHE") or Path.home() / ".cache" / "tx_keras" / "corpora"
    return Path(cache_dir).expanduser().absolute()


def cache_name(url: str) -> str:
    """The cache file name of `url`: its readable file name (suffixes kept, so `.zip` stays recognisable)
    tagged with a hash of the whole URL, so two URLs ending in the same name never share a cache entry."""
    name = PurePosixPath(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "corpus"
    stem, dot, suffixes = name.partition(".")
    tag = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return f"{stem}-{tag}{dot}{suffixes}"


def _cached_download(url: str, folder: Path, expected: str | None) -> Path:
    target = folder / cache_name(url)
    if target.is_file() and target.stat().st_size > 0:
        if expected is None or _file_digest(target) == expected:
            return target
        target.unlink()  # damaged or outdated: fetch it again, and check that copy instead
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CorpusError(f"data.path={url}: cannot create the cache folder {folder}: {error}") from error
    _download(url, target, expected)
    return target


def _download(url: str, target: Path, expected: str | None) -> None:
    digest = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        with (
            atomic_file(target) as temp,
            open(temp, "wb") as stream,
            urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response,
        ):
            length = response.headers.get("Content-Length", "")
            size = int(length) if length.isdigit() else None
            received = 0
            with tqdm(
                total=size, unit="B", unit_scale=True, unit_divisor=1024, desc=target.name, file=sys.stderr
            ) as progress:
                while chunk := response.read(_CHUNK):
                    stream.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    progress.update(len(chunk))
            stream.flush()  # the checks below raise inside atomic_file: the target is never written
            if size is not None and received != size:
                raise CorpusError(f"data.path={url}: download failed: got {received} of {size} bytes")
            if received == 0:
                raise CorpusError(f"data.path={url}: the download is empty")
            if expected is not None and (actual := digest.hexdigest()) != expected:
                raise CorpusError(_mismatch(url, expected, actual) + "; the download was removed")
    except (OSError, http.client.HTTPException) as error:
        raise CorpusError(f"data.path={url}: download failed: {_reason(error)}") from error


def _reason(error: BaseException) -> str:
    if isinstance(error, urllib.error.HTTPError):
        reason = f"HTTP {error.code} {error.reason}"
    elif isinstance(error, urllib.error.URLError):
        reason = str(error.reason)
    else:
        reason = str(error) or type(error).__name__
    return " ".join(reason.split())


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _mismatch(location: str, expected: str, actual: str) -> str:
    return f"data.path={location}: SHA-256 mismatch: expected {expected}, got {actual}"
