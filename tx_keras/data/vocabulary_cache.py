"""Learned vocabularies cached by what they were learned from, and only ever used whole and sound.

The WordPiece learner takes about a minute a language on 170k sentences, and every job of a sweep over the
same corpus would repeat it, so a vocabulary is kept under a key made of its texts, format, size and learner
version. What is found under a key is used only if its content is the one written there (a digest beside it,
written first) and the tokenizer builds from it; otherwise it is learned again, with one line in the log. A
vocabulary that was just learned and still does not build a tokenizer is a CorpusError: one line, never a
traceback from the tokenizer's C++ library.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

from tx_keras.data.corpus_error import CorpusError
from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.data.vocabulary_learning import learn_vocabulary
from tx_keras.data.worker_processes import map_in_processes
from tx_keras.run_folder.atomic_write import write_text

log = logging.getLogger(__name__)

# Part of the cache key: change it when learning, or the text it learns from (text_rule.py), changes.
_LEARNER = "wordpiece-learner-v3"
# A worker process takes ~5 s to start (it imports TensorFlow), as long as the learner takes on ~5,000
# distinct words (Zen 4, Tatoeba French: 1,523 words 1.2 s, 5,554 words 6.1 s, 38,863 words 33 s); below
# that the vocabularies are learned here, one after the other.
WORKER_WORDS = 5000

Wanted = tuple[list[str], TextFormat]  # the texts (kept and cleaned by the text rule) and their format


def cached_tokenizers(wanted: list[Wanted], size: int, cache: Path) -> list[tuple[Vocabulary, TextTokenizer]]:
    """A vocabulary of `size` tokens and its tokenizer for each (texts, format): found in `cache`, else
    learned and cached. Two large WordPiece vocabularies to learn are learned at once, one in a worker
    process (the learner is one Python thread, so one core a language; a worker costs a few seconds to
    start, WORKER_WORDS)."""
    paths = [cache / f"{form.kind}-{size}-{_key(texts, form, size)}.txt" for texts, form in wanted]
    found = {path: _found(path, form) for path, (_, form) in zip(paths, wanted, strict=True)}
    jobs = [(texts, form, size, path) for (texts, form), path in zip(wanted, paths, strict=True)]
    missing = list({path: job for job, path in zip(jobs, paths, strict=True) if found[path] is None}.values())
    if missing:
        _learn(missing, size, cache)
    return [found[path] or _fresh(path, form) for path, (_, form) in zip(paths, wanted, strict=True)]


def _learn(missing: list[tuple[list[str], TextFormat, int, Path]], size: int, cache: Path) -> None:
    large = all(
        form.kind == "wordpiece" and len({word for text in texts for word in text.split()}) >= WORKER_WORDS
        for texts, form, _, _ in missing
    )
    in_workers = missing[:-1] if large else []
    started = time.perf_counter()
    for texts, form, _, _ in missing:
        log.info("vocabulary: learning %d %s tokens from %d texts ...", size, form.kind, len(texts))
    cache.mkdir(parents=True, exist_ok=True)
    results = map_in_processes(_learned_to_file, in_workers, len(in_workers)) if in_workers else []
    for job in missing[len(in_workers) :]:
        _learned_to_file(job)
    for _ in results:
        pass
    log.info("vocabulary: learned in %.0f s (cached in %s)", time.perf_counter() - started, cache)


def _learned_to_file(job: tuple[list[str], TextFormat, int, Path]) -> None:
    texts, text_format, size, path = job
    try:
        vocabulary = learn_vocabulary(texts, text_format, size)
    except ValueError as error:  # no words to learn from, a size with no room: the config's to fix
        raise CorpusError(f"vocabulary: {error}") from None
    content = "".join(f"{token}\n" for token in vocabulary.tokens)  # as Vocabulary.to_file writes it
    # The digest first, then the vocabulary (each atomic): a reader that finds the vocabulary finds its
    # digest, also while a concurrent sweep job writes the same (deterministic) one.
    write_text(_digest_path(path), hashlib.sha256(content.encode("utf-8")).hexdigest() + "\n")
    write_text(path, content)


class _Unusable(Exception):
    """Why a cached vocabulary cannot be used."""


def _found(path: Path, text_format: TextFormat) -> tuple[Vocabulary, TextTokenizer] | None:
    """The cached vocabulary at `path` and its tokenizer; None when there is none, or (its files removed,
    the reason logged) when it cannot be used."""
    if not path.exists():
        return None
    try:
        return _built(path, text_format)
    except _Unusable as reason:
        _remove(path)
        log.warning("vocabulary: the cached %s is unusable (%s); learning it again", path, reason)
        return None


def _fresh(path: Path, text_format: TextFormat) -> tuple[Vocabulary, TextTokenizer]:
    """The vocabulary just learned to `path` and its tokenizer; a fault now is the learner's or the disk's."""
    try:
        return _built(path, text_format)
    except _Unusable as reason:
        _remove(path)
        raise CorpusError(
            f"vocabulary {path}: the {text_format.kind} tokenizer cannot use the vocabulary just learned "
            f"({reason}); it is removed from the cache"
        ) from None


def _built(path: Path, text_format: TextFormat) -> tuple[Vocabulary, TextTokenizer]:
    """The vocabulary at `path`, if its content is the one written under its key, and its tokenizer."""
    try:
        content = path.read_bytes()
        digest_path = _digest_path(path)
        digest = digest_path.read_text(encoding="utf-8").strip() if digest_path.exists() else None
        if digest != hashlib.sha256(content).hexdigest():
            raise _Unusable("its content is not the one written under its key")
        vocabulary = Vocabulary.from_text(content.decode("utf-8"), str(path))
        return vocabulary, TextTokenizer(vocabulary, text_format)
    except (OSError, ValueError, RuntimeError) as error:  # RuntimeError: tensorflow-text's C++ refusal
        lines = str(error).strip().splitlines()
        raise _Unusable(lines[-1] if lines else type(error).__name__) from None


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    _digest_path(path).unlink(missing_ok=True)


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _key(texts: list[str], text_format: TextFormat, size: int) -> str:
    digest = hashlib.sha256(f"{text_format.kind}|{text_format.lowercase}|{size}|{_LEARNER}\n".encode())
    for text in texts:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()[:24]
