"""Streamed corpora (`data.stream=true`): the split by source hash, the bad-line counts, a replayable epoch
order, memory flat in the corpus size, and a kill -9 mid-epoch that resumes to the uninterrupted run."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.data import build_task
from tx_keras.data.held_out_sources import HeldOutSources
from tx_keras.data.parallel_corpus import read_parallel_corpus
from tx_keras.data.source_hash import source_hash
from tx_keras.data.task_config import task_config

_WORDS = [f"w{i}" for i in range(60)]


def write_corpus(path: Path, pairs: int, seed: int = 0, bad_lines: bool = False) -> Path:
    """`pairs` generated pairs (a target word per source word, in reverse order); every 50th source gets a
    second translation, as Tatoeba's do; with `bad_lines`, a few lines of each kind the reader skips."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 9, size=pairs)
    words = rng.integers(0, len(_WORDS), size=(pairs, 8))
    with open(path, "w", encoding="utf-8") as out:
        for i in range(pairs):
            source = [_WORDS[w] for w in words[i, : lengths[i]]]
            target = " ".join(f"t{word[1:]}" for word in reversed(source))
            out.write(f"{' '.join(source)}\t{target}\n")
            if i % 50 == 0:
                out.write(f"{' '.join(source)}\t{target} bis\n")
        if bad_lines:
            out.write("no tab here\n\n \t\n")
    if bad_lines:
        with open(path, "ab") as out:
            out.write(b"\xff\xfe broken\tbytes\n")
    return path


def _config(path, cache, **overrides):
    return {
        "name": "parallel_text",
        "path": str(path),
        "cache_dir": str(cache),
        "stream": True,
        "tokenizer": "characters",
        "vocab_size": 80,
        "num_validation": 30,
        "num_test": 40,
        "stream_sample": 300,
        "stream_shuffle_buffer": 100,
        "seed": 3,
        **overrides,
    }


def test_the_held_out_sets_are_whole_sources_of_smallest_hash_whatever_the_order():
    rng = np.random.default_rng(0)
    pairs = [(f"s{i // 3}", f"t{i}") for i in range(900)]  # 300 sources, 3 translations each
    results = []
    keys = [source_hash(source, 7) for source, _ in pairs]
    up, down = (sorted(range(900), key=lambda i, s=sign: (s * keys[i], i)) for sign in (1, -1))
    # File order, a random order, and by ascending / descending hash (a source's pairs in file order: the
    # overflowing source keeps its first translations); ascending is what the merge of worker processes'
    # candidates feeds (a larger key came in as training data while the test set's overflow left
    # validation one pair short, until 2026-12-02).
    for order in (np.arange(900), rng.permutation(900), up, down):
        held_out, train = HeldOutSources(num_validation=20, num_test=31), []
        for i in order:
            train += held_out.add(source_hash(pairs[i][0], 7), pairs[i])
        splits, leftover = held_out.splits()
        train += leftover
        results.append((splits, sorted(train)))
        assert len(splits["test"]) == 31 and len(splits["validation"]) == 20
        sides = [{source for source, _ in part} for part in (splits["test"], splits["validation"], train)]
        assert not (sides[0] & sides[1] or sides[0] & sides[2] or sides[1] & sides[2])
        # 51 held-out pairs need 17 + 1 sources: the 18 of smallest hash (the last one's surplus dropped).
        smallest = sorted({source for source, _ in pairs}, key=lambda s: source_hash(s, 7))[:18]
        assert sides[0] | sides[1] == set(smallest) and len(train) == 900 - 54
    for other in results[1:]:
        assert {k: sorted(v) for k, v in results[0][0].items()} == {k: sorted(v) for k, v in other[0].items()}
        assert results[0][1] == other[1]


def test_a_glob_is_one_corpus_and_the_bad_lines_are_counted_as_in_memory(tmp_path):
    for part in range(2):
        write_corpus(tmp_path / f"part-{part}.tsv", 400, seed=part, bad_lines=True)
    task = build_task(_config(tmp_path / "part-*.tsv", tmp_path / "cache"))
    expected = {key: 0 for key in read_parallel_corpus(tmp_path / "part-0.tsv").counts}
    for part in range(2):
        for key, count in read_parallel_corpus(tmp_path / f"part-{part}.tsv").counts.items():
            expected[key] += count
    assert task.report["lines"] == expected and expected["malformed"] == 2 and expected["invalid_utf8"] == 2
    pairs = task.report["pairs"]
    assert pairs["validation"] == 30 and pairs["test"] == 40
    assert pairs["train"] + 70 <= expected["kept"] <= pairs["train"] + 70 + 1  # at most one surplus dropped
    assert task.splits["validation"][0].shape[0] == 30 and task.train_stream.pairs == pairs["train"]


def _epoch_rows(dataset):
    """Each batch's source rows as tuples without padding, in order."""
    return [[tuple(int(i) for i in row if i) for row in source.numpy()] for (source, _), _ in dataset]


def _rows_of(batches) -> list[tuple]:
    return [row for batch in _epoch_rows(batches) for row in batch]


def test_an_epoch_streams_every_training_pair_once_in_an_order_the_epoch_and_skip_replay(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.tsv", 600)
    # A sample of every training pair: the epoch's steps (the sample's, scaled) are exactly one pass's.
    task = build_task(_config(corpus, tmp_path / "cache", stream_sample=10_000))
    stream = task.train_stream
    epoch, skip = tf.Variable(0, dtype=tf.int64), tf.Variable(0, dtype=tf.int64)
    left_out = tf.Variable(0, dtype=tf.int64)
    dataset = stream.dataset(16, 256, "bucket", seed=5, epoch=epoch, skip=skip, left_out=left_out)
    first = _epoch_rows(dataset)
    rows = [row for batch in first for row in batch]
    assert len(first) == stream.epoch_steps(16, 256, "bucket") and len(rows) == stream.pairs  # each once
    assert dataset.options().autotune.enabled is False  # no stall at epoch ends (batching/autotune_thread.py)
    assert int(left_out.numpy()) == 0  # none wider than the widths here
    skip.assign(3)
    # The same order again, less the batches a resume skips (the trainer ends that epoch at its last batch:
    # the declared length stays the full epoch's).
    assert int(dataset.cardinality()) == len(first)
    assert _epoch_rows(dataset.take(len(first) - 3)) == first[3:]
    skip.assign(0)
    epoch.assign(1)
    second = _epoch_rows(dataset)
    assert second != first and sorted(row for batch in second for row in batch) == sorted(rows)
    # Two processes' shards: the same steps, batch shapes step by step, disjoint lines that together cover
    # the pass (fixed batching runs across a pass's end: full batches, so a few rows of the next pass).
    steps = stream.shard(0, 2).epoch_steps(8, None, "fixed")
    shards = [list(stream.shard(i, 2).dataset(8, None, "fixed", 5)) for i in range(2)]
    shapes = [[tuple(source.shape) + tuple(labels.shape) for (source, _), labels in s] for s in shards]
    assert len(shapes[0]) == steps and shapes[0] == shapes[1] == [shapes[0][0]] * steps
    both = [row for shard in shards for row in _rows_of(shard)]
    assert set(both) == set(rows) and len(both) - len(rows) < 16


def test_training_pairs_wider_than_the_widths_are_left_out_and_counted(tmp_path):
    """A pair wider than the padded widths (the sample's and held-out sets' longest rows) is left out of the
    batches, not cut, and counted: here the widths are narrowed below some rows, with a sample of every pair
    (so the epoch is exactly one pass of the rows that fit)."""
    corpus = write_corpus(tmp_path / "corpus.tsv", 600)
    full = build_task(_config(corpus, tmp_path / "cache", stream_sample=10_000)).train_stream
    pairs = [line.rstrip("\n").split("\t") for path in full.files for line in open(path, encoding="utf-8")]
    source = full.source_tokenizer.tokenize(tf.constant([s for s, _ in pairs])).row_lengths().numpy() + 1
    target = full.target_tokenizer.tokenize(tf.constant([t for _, t in pairs])).row_lengths().numpy() + 2
    width = int(np.percentile(np.maximum(source, target), 90))
    stream = dataclasses.replace(full, source_width=width, target_width=width)
    wide = int(np.sum(np.maximum(source, target) > width))
    left_out = tf.Variable(0, dtype=tf.int64)
    batches = list(stream.dataset(16, 256, "bucket", seed=5, left_out=left_out))
    rows = [row for batch in _epoch_rows(batches) for row in batch]
    assert 0 < wide < len(pairs) // 5 and int(left_out.numpy()) == wide
    assert len(rows) == len(pairs) - wide and max(len(row) for row in rows) <= width
    assert all(source.shape[1] <= width and labels.shape[1] < width for (source, _), labels in batches)


def test_a_second_build_reads_the_prepared_parts_and_max_pairs_is_refused(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.tsv", 300)
    build_task(_config(corpus, tmp_path / "cache"))
    (meta,) = (tmp_path / "cache" / "streams").glob("*/meta.json")
    written = meta.stat().st_mtime_ns
    again = build_task(_config(corpus, tmp_path / "cache"))
    assert meta.stat().st_mtime_ns == written and again.report["pairs"]["validation"] == 30
    with pytest.raises(ValueError, match="data.max_pairs needs the in-memory corpus"):
        task_config(_config(corpus, tmp_path / "cache", max_pairs=100))


_RUN = [
    "model=tiny",
    "data=parallel_text",
    "data.stream=true",
    "data.tokenizer=characters",
    "data.vocab_size=80",
    "data.num_validation=32",
    "data.num_test=32",
    "data.stream_sample=2000",
    "data.stream_shuffle_buffer=2000",
    "trainer.batch_size=32",
    "logging.verbose=0",
    "logging.probes=0",
    "logging.attention_maps=off",
    "export.enabled=false",
]

# Runs tx-train in a child and prints its exit code, peak RSS (KiB) and start time (epoch seconds): a fresh
# wrapper per run, so RUSAGE_CHILDREN holds that run's peak alone.
_MEASURE = (
    "import resource, subprocess, sys, time; started = time.time(); "
    "code = subprocess.run([sys.executable, '-m', 'tx_keras.cli.train', *sys.argv[1:]], "
    "stdout=subprocess.DEVNULL).returncode; "
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, started)"
)


def _first_step_s(run_dir: Path, started: float) -> float:
    """Seconds from the process start to the end of the first training step: the time stamp of train.log's
    "first training step done" line, less the wrapper's start."""
    line = next(line for line in (run_dir / "train.log").open() if "first training step done" in line)
    stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    return stamp - started


def _measured_run(tmp_path: Path, pairs: int, *extra: str, name: str = "run") -> tuple[int, float]:
    """(peak RSS in KiB, seconds to the first step) of a short streamed run on a generated corpus of
    `pairs` pairs (generated once: a second run finds its prepared parts and vocabularies cached)."""
    corpus = tmp_path / f"corpus-{pairs}.tsv"
    if not corpus.exists():
        write_corpus(corpus, pairs)
    run_dir = tmp_path / f"{name}-{pairs}"
    args = [*_RUN, f"data.path={corpus}", f"data.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={run_dir}"]
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, *args, *extra], capture_output=True, text=True, timeout=1800
    )
    code, peak, started = result.stdout.split()
    assert code == "0", result.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["data"]["pairs"]["train"] > pairs
    assert 0 < summary["data"]["padding_fraction"] < 1
    return int(peak), _first_step_s(run_dir, float(started))


# Builds a streamed task in a child and streams 200 training batches; prints the child's peak RSS (KiB).
_STREAM = """
import sys
from tests.test_streamed_corpus import _config
from tx_keras.data import build_task
task = build_task(_config(sys.argv[1], sys.argv[2], stream_sample=2000, stream_shuffle_buffer=2000))
for (source, decoder), labels in task.train_stream.dataset(32, None, "bucket", seed=0).take(200):
    assert source.shape[0] == decoder.shape[0] == labels.shape[0]
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1])
"""


# The preparation pass alone in a child (it imports no TensorFlow); prints the child's peak RSS (KiB), VmHWM:
# getrusage's ru_maxrss would start from the forking parent's (pytest, with TensorFlow loaded).
_PREPARE = """
import sys
from pathlib import Path
from tx_keras.data.prepared_corpus import prepare_corpus
prepared = prepare_corpus([Path(sys.argv[1])], Path(sys.argv[2]), source_column=0, target_column=1,
    lowercase=False, max_words=40, member=None, num_validation=30, num_test=40, seed=0, sample_size=2000)
assert len(prepared.texts("sample")) == 2000
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
print(prepared.pairs["train"], peak)
"""


def test_the_preparation_pass_keeps_memory_flat_from_20k_to_200k_pairs(tmp_path):
    """The pass that reads the whole corpus (bad lines, split, sample, part files) holds a bounded set: the
    same peak RSS at ten times the corpus (the in-memory reader holds ~2.6 KB a pair)."""
    children = []
    for pairs in (20_000, 200_000):
        corpus = write_corpus(tmp_path / f"corpus-{pairs}.tsv", pairs)
        command = [sys.executable, "-c", _PREPARE, str(corpus), str(tmp_path / f"cache-{pairs}")]
        children.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    (small_pairs, small), (large_pairs, large) = (
        map(int, child.communicate(timeout=600)[0].split()) for child in children
    )
    assert small_pairs > 20_000 and large_pairs > 200_000
    assert abs(large - small) < 0.2 * small, (small, large)


@pytest.mark.slow  # two TensorFlow processes: about a minute on 2 shared cores at load 7 (2026-12-02)
def test_the_streamed_data_path_keeps_memory_flat_from_10k_to_100k_pairs(tmp_path):
    """Reading, splitting, sampling, learning the vocabularies and streaming batches: the part of a run that
    grows with the corpus in memory (the whole run at 200k and 2M pairs: the slow test below)."""
    children = []
    for pairs in (10_000, 100_000):
        corpus = write_corpus(tmp_path / f"corpus-{pairs}.tsv", pairs)
        command = [sys.executable, "-c", _STREAM, str(corpus), str(tmp_path / f"cache-{pairs}")]
        children.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    small, large = (int(child.communicate(timeout=600)[0].split()[-1]) for child in children)
    print(f"peak RSS {small} KiB at 10k pairs, {large} KiB at 100k")
    assert abs(large - small) < 0.2 * small, (small, large)


@pytest.mark.slow  # generates 2.2M lines and runs three times: 127 s quiet, ~15 min at load ~7 (2026-12-02)
def test_peak_memory_is_flat_from_200k_to_2m_pairs_and_training_starts_within_2_minutes(tmp_path):
    """The issue's "done when": a generated corpus of 200k and of 2M pairs trains with peak RSS within 20 %
    and its first step within 2 minutes of the process start, on a first run (preparation pass, vocabularies
    learned from the 200k-pair sample) and, cached, within 30 s. Time is wall time from the wrapper's start to
    the time stamp of train.log's "first training step done" line (its trace included); generating the
    corpus is not counted. Load stretches wall time: on a quiet AVX2 EPYC (2026-12-02, preparation in 2
    processes) 27 s at 200k, 42 s at 2M, 21 s cached, peak RSS 1.14 / 1.09 GB; at load ~7 before the pass
    went parallel, 205 s and 288 s (docs/corpora.md)."""
    small, large = (
        _measured_run(tmp_path, pairs, "trainer.max_train_minutes=0.1", "data.stream_sample=200000")
        for pairs in (200_000, 2_000_000)
    )
    cached = _measured_run(
        tmp_path, 2_000_000, "trainer.max_train_minutes=0.1", "data.stream_sample=200000", name="cached"
    )
    print(
        f"peak RSS, first step: 200k {small[0]} KiB, {small[1]:.0f} s; 2M {large[0]} KiB, {large[1]:.0f} s; "
        f"2M cached {cached[0]} KiB, {cached[1]:.0f} s"
    )
    assert abs(large[0] - small[0]) < 0.2 * small[0], (small, large)
    assert small[1] < 120 and large[1] < 120 and cached[1] < 30, (small, large, cached)


_RESUMED = [
    *_RUN,
    "model.dropout=0.1",
    "trainer.epochs=2",
    "trainer.deterministic=true",
    "trainer.checkpoint_every_minutes=0.005",
    "data.stream_shuffle_buffer=500",
]


def _arrays(run_dir):
    with np.load(run_dir / "checkpoints" / "last.npz", allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


@pytest.mark.slow  # 11 min on 2 cores shared at load ~10 (2026-12-02): three tiny runs
def test_kill_9_mid_epoch_then_the_same_command_equals_an_uninterrupted_run(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.tsv", 6000)
    common = [*_RESUMED, f"data.path={corpus}", f"data.cache_dir={tmp_path / 'cache'}"]
    straight = tmp_path / "straight"
    command = [sys.executable, "-m", "tx_keras.cli.train", *common]
    subprocess.run([*command, f"hydra.run.dir={straight}"], check=True, capture_output=True, timeout=900)
    run_dir = tmp_path / "killed"
    process = subprocess.Popen(
        [*command, f"hydra.run.dir={run_dir}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    checkpoint, deadline = run_dir / "checkpoints" / "last.npz", time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        try:
            meta = json.loads(str(_arrays(run_dir)["meta"])) if checkpoint.exists() else {}
        except (OSError, ValueError, KeyError):
            meta = {}
        if meta.get("epoch") == 1 and meta.get("batch", 0) > 0:  # inside the second epoch
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    process.wait()
    assert process.returncode == -signal.SIGKILL and not (run_dir / "summary.json").exists()
    again = subprocess.run(
        [*command, f"hydra.run.dir={run_dir}"], capture_output=True, text=True, timeout=900
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "batches of epoch 2" in again.stdout
    a, b = _arrays(straight), _arrays(run_dir)
    assert a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a if name != "meta")
    summaries = [json.loads((run / "summary.json").read_text()) for run in (straight, run_dir)]
    assert summaries[0]["metrics"] == summaries[1]["metrics"]


def _two_processes(tmp_path, corpus, *extra: str) -> list[tuple[int, str, str]]:
    """A streamed tiny run in 2 JAX processes over loopback: (exit code, stdout, stderr) of each."""
    from tests.test_distribution import _free_port

    port = _free_port()
    common = [
        *_RUN,
        "trainer.backend=jax",
        "trainer.epochs=1",
        "trainer.precision=float32",
        "model.dropout=0.0",
        f"data.path={corpus}",
        f"data.cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={tmp_path / 'two'}",
        "trainer.distribution=data_parallel",
        "trainer.num_processes=2",
        f"trainer.coordinator=127.0.0.1:{port}",
        *extra,
    ]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tx_keras.cli.train", *common, f"trainer.process_id={index}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for index in (1, 0)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    return [(process.returncode, *output) for process, output in zip(processes, outputs, strict=True)]


@pytest.mark.slow  # 4:10 on 2 cores shared at load ~7 (2026-12-02): two JAX processes, trace and evaluation
def test_two_jax_processes_each_read_their_own_shard_of_the_stream(tmp_path):
    """Fixed batching: each process streams every 2nd line of each part and batches half of each global
    batch; both run the epoch's steps (the sample's estimate, the same in both) and finish together."""
    corpus = write_corpus(tmp_path / "corpus.tsv", 600)
    results = _two_processes(tmp_path, corpus, "trainer.batching=fixed")
    for code, _, stderr in results:
        assert code == 0, stderr[-2000:]
    logs = [stdout + stderr for _, stdout, stderr in results]
    assert "process 1 of 2 streams its shard" in logs[0] and "process 0 of 2 streams its shard" in logs[1]
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["data"]["stream_left_out_wide_pairs"] == 0
