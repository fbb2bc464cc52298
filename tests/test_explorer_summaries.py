"""What the attention callback writes for the Attention tab: raw float16 weights, token labels, a size cap."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.proto.event_pb2 import Event

from tx_keras.data.task import SPLITS, Task, pad_rows
from tx_keras.data.text_format import TextFormat
from tx_keras.data.text_rule import clean_text as normalize_text
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.data.vocabulary_learning import learn_vocabulary
from tx_keras.run_folder.attention_format import KINDS, PLUGIN_NAME, ProbeAttention
from tx_keras.run_folder.attention_summaries import probes_within
from tx_keras.training.callbacks.attention_maps import AttentionMaps
from tx_keras.training.callbacks.probes import Probes

HEADS, LAYERS = 2, 3


def _probes() -> Probes:
    """Two probe sentences of different lengths (padding after each), as Probes.from_task builds them."""
    return Probes(
        source=np.zeros((2, 6), np.int32),
        decoder_input=np.zeros((2, 7), np.int32),
        source_tokens=[["a", "b", "<eos>"], ["a", "b", "c", "d", "<eos>"]],
        target_tokens=[["<sos>", "x", "y", "z"], ["<sos>", "x"]],
        sources=["a b", "a b c d"],
        references=["x y z", "x"],
    )


def _attention() -> dict[str, np.ndarray]:
    """model.trace's attention dict: kind/layer_i -> (batch, heads, padded queries, padded keys)."""
    rng = np.random.default_rng(0)
    shapes = {"encoder_self": (6, 6), "decoder_self": (7, 7), "cross": (7, 6)}
    return {
        f"{kind}/layer_{layer}": rng.random((2, HEADS, *shapes[kind])).astype(np.float32)
        for kind in KINDS
        for layer in range(1, LAYERS + 1)
    }


def test_records_hold_every_layer_and_head_cut_to_the_real_tokens():
    callback = AttentionMaps(None, _probes(), {1}, tensors_mb=1.0)
    attention = _attention()
    records = callback._explorer_records(attention)
    assert [(r.probe, r.kind) for r, _ in records] == [(p, k) for p in (0, 1) for k in KINDS]
    by_key = {(r.probe, r.kind): (r, w) for r, w in records}
    record, weights = by_key[(0, "cross")]
    assert record.queries == ["<sos>", "x", "y", "z"] and record.keys == ["a", "b", "<eos>"]
    assert record.source == "a b" and record.reference == "x y z"
    assert weights.dtype == np.float16 and weights.shape == (LAYERS, HEADS, 4, 3)
    np.testing.assert_array_equal(weights[1], attention["cross/layer_2"][0, :, :4, :3].astype(np.float16))
    record, weights = by_key[(1, "encoder_self")]
    assert record.queries == record.keys == ["a", "b", "c", "d", "<eos>"] and weights.shape == (
        LAYERS,
        HEADS,
        5,
        5,
    )
    assert by_key[(1, "decoder_self")][1].shape == (LAYERS, HEADS, 2, 2)


def _text_task(sentences: list[str]) -> Task:
    """A real-text task as parallel_text builds one: WordPiece ids of the sentences (both sides, every
    split), from a vocabulary learned on a corpus where `motion` is too rare to be one piece."""
    text_format = TextFormat("wordpiece")
    corpus = [normalize_text(text) for text in sentences] + ["are you in favor of this moment ?"] * 20
    vocabulary = learn_vocabulary(corpus, text_format, 60)
    rows = TextTokenizer(vocabulary, text_format).tokenize(tf.constant(sentences)).to_list()
    width = max(map(len, rows)) + 2
    source = pad_rows([[*row, Vocabulary.EOS] for row in rows], width)
    target = pad_rows([[Vocabulary.SOS, *row, Vocabulary.EOS] for row in rows], width)
    splits = {split: (source, target) for split in SPLITS}
    return Task("text", vocabulary, vocabulary, splits, text_format, text_format)


def test_probe_source_is_the_sentence_while_the_axes_keep_the_pieces():
    sentences = ["Are you in favor of this motion?", "I'm in favor."]
    probes = Probes.from_task(_text_task(sentences), 2)
    assert "##" in " ".join(probes.source_tokens[0])  # the head view's labels: WordPiece pieces
    assert probes.sources == sentences
    records = AttentionMaps(None, probes, {1})._explorer_records(_attention_for(probes))
    assert {record.source for record, _ in records} == set(sentences)
    cross = next(record for record, _ in records if record.probe == 0 and record.kind == "cross")
    assert cross.keys == probes.source_tokens[0]  # pieces, EOS included


def _attention_for(probes: Probes) -> dict[str, np.ndarray]:
    """Uniform attention of one layer shaped for `probes` (B, heads, queries, keys)."""
    rows, source, target = len(probes), probes.source.shape[1], probes.decoder_input.shape[1]
    shapes = {"encoder_self": (source, source), "decoder_self": (target, target), "cross": (target, source)}
    return {f"{kind}/layer_1": np.full((rows, HEADS, *shapes[kind]), 0.1, np.float32) for kind in KINDS}


def test_the_size_cap_leaves_out_the_probes_past_it_with_a_warning(caplog):
    first = LAYERS * HEADS * (3 * 3 + 4 * 4 + 4 * 3) * 2  # bytes of probe 1's three kinds, float16
    callback = AttentionMaps(None, _probes(), {1}, tensors_mb=(first + 10) / 2**20)
    with caplog.at_level(logging.WARNING):
        records = callback._explorer_records(_attention())
    assert {record.probe for record, _ in records} == {0}
    assert "1 of 2 probes fit in logging.attention_tensors_mb" in caplog.text
    assert AttentionMaps(None, _probes(), {1}, tensors_mb=0)._explorer_records(_attention()) == []


@pytest.mark.parametrize(("sizes", "cap", "kept"), [([5, 5, 5], 10, 2), ([5, 5], 4, 0), ([5, 5], 100, 2)])
def test_probes_within(sizes, cap, kept):
    assert probes_within(sizes, cap) == kept


def test_metadata_round_trips_and_names_the_plugin():
    record = ProbeAttention(1, "cross", ["<sos>", "é"], ["a", "<eos>"], "a", "é")
    metadata = record.to_metadata()
    assert metadata.plugin_data.plugin_name == PLUGIN_NAME
    assert ProbeAttention.from_content(metadata.plugin_data.content) == record
    assert record.tag == "attention_explorer/probe_2/cross"


def test_a_real_run_logs_float16_attention_with_tokens_at_every_logged_epoch(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    folders = [run_dir, run_dir / "attention"]  # wherever the callback's writer points
    tags, events = set(), None
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("events.out.tfevents.*")):
            accumulator = event_accumulator.EventAccumulator(
                str(path), size_guidance={event_accumulator.TENSORS: 0}
            )
            accumulator.Reload()
            found = {t for t in accumulator.Tags()["tensors"] if t.startswith("attention_explorer/")}
            if found:
                tags, events = found, accumulator
    assert tags == {f"attention_explorer/probe_{p}/{k}" for p in (1, 2) for k in KINDS}
    for tag in tags:
        series = events.Tensors(tag)
        assert [s.step for s in series] == [0, 1, 2]  # 0: before training
        record = ProbeAttention.from_content(events.SummaryMetadata(tag).plugin_data.content)
        weights = np.frombuffer(series[-1].tensor_proto.tensor_content, np.float16).reshape(
            [d.size for d in series[-1].tensor_proto.tensor_shape.dim]
        )
        assert weights.shape == (1, 2, len(record.queries), len(record.keys))  # tiny: 1 layer, 2 heads
        np.testing.assert_allclose(weights.astype(np.float32).sum(-1), 1.0, atol=0.01)


def test_writing_attention_prints_nothing_with_onednn_on(tmp_path):
    """A float16 tensor makes TensorFlow's oneDNN build print an error line about DT_HALF on stderr
    (on AVX-512 CPUs too): the weights are written as their bits, and read back as the same float16."""
    code = (
        "import sys, numpy as np, tensorflow as tf\n"
        "from tx_keras.run_folder.attention_format import ProbeAttention\n"
        "from tx_keras.run_folder.attention_summaries import write_attention\n"
        "record = ProbeAttention(0, 'cross', ['a', 'b'], ['a', 'b'], 'a b', 'a b')\n"
        "with tf.summary.create_file_writer(sys.argv[1]).as_default():\n"
        "    write_attention([(record, np.full((1, 1, 2, 2), 0.3, np.float16))], step=0)\n"
    )
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "DT_HALF" not in result.stderr
    (path,) = tmp_path.glob("events.out.tfevents.*")
    events = [Event.FromString(r) for r in tf.data.TFRecordDataset(str(path)).as_numpy_iterator()]
    (value,) = [v for event in events for v in event.summary.value]
    logged = np.frombuffer(value.tensor.tensor_content, np.float16)
    np.testing.assert_array_equal(logged, np.full(4, 0.3, np.float16))
