"""A tiny real run's dashboard: attention images, samples, diagnostics and HParams, read back from disk."""

import json

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from tx_keras.data.translation import translate
from tx_keras.run_folder.attention_format import ProbeAttention
from tx_keras.training.callbacks.attention_maps import epochs_to_log


def _events(folder):
    """Every event file of the folder (the run folder holds the dashboard's, the final scores', HParams')."""
    accumulator = event_accumulator.EventAccumulator(
        str(folder), size_guidance={event_accumulator.TENSORS: 0}
    )
    accumulator.Reload()
    return accumulator


@pytest.fixture(scope="module")
def run_dir(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    return run_dir


def test_attention_images_for_every_layer_and_kind_at_every_epoch(run_dir):
    events = _events(run_dir)
    tags = {"attention/encoder_self/layer_1", "attention/decoder_self/layer_1", "attention/cross/layer_1"}
    assert {tag for tag in events.Tags()["tensors"] if tag.startswith("attention/")} == tags
    for tag in tags:
        records = events.Tensors(tag)
        assert [record.step for record in records] == [1, 2]  # the Images tab's epoch slider
        width, height, *pngs = tf.make_ndarray(records[-1].tensor_proto)
        assert len(pngs) == 2  # one image per probe sentence
        image = tf.image.decode_png(pngs[0]).numpy()
        assert image.shape == (int(height), int(width), 3) and image.std() > 10


def test_translation_samples_table(run_dir):
    """Each epoch, one row per probe: the probe's sentence, its reference translation, the model's own."""
    events = _events(run_dir)
    records = events.Tensors("samples/translations")
    assert [record.step for record in records] == [1, 2]
    lines = tf.make_ndarray(records[-1].tensor_proto).item().decode().splitlines()
    assert lines[:2] == ["| source | reference | model output |", "|---|---|---|"] and len(lines) == 4
    for probe, line in enumerate(lines[2:]):
        source, reference, output = (cell.strip() for cell in line.strip("| ").split(" | "))
        assert translate(source) == reference  # a sentence of the grammar and its French
        metadata = events.SummaryMetadata(f"attention_explorer/probe_{probe + 1}/cross")
        assert ProbeAttention.from_content(metadata.plugin_data.content).source == source  # the tab's
        assert output and not {"<pad>", "<sos>", "<eos>"} & set(output.split())  # decoded words only


def test_diagnostics_are_finite_with_positive_gradient_norms(run_dir):
    events = _events(run_dir)
    tags = {tag for tag in events.Tags()["tensors"] if tag.startswith("layers/")}  # one Scalars group
    layers = {"encoder/layer_1", "decoder/layer_1"}
    assert {f"layers/gradient_norm/{layer}" for layer in layers} <= tags
    assert {f"layers/rank_collapse/{layer}" for layer in layers} <= tags
    assert {f"layers/activation_std/{layer}" for layer in layers} <= tags
    assert "layers/attention_entropy/cross/layer_1/head_2" in tags
    for tag in tags:
        values = [float(tf.make_ndarray(record.tensor_proto)) for record in events.Tensors(tag)]
        assert len(values) == 3 and np.all(np.isfinite(values)), tag  # before training, after each epoch
        if tag.startswith("layers/gradient_norm/"):
            assert min(values) > 0, tag


def _plugin_data(events, tag):
    return plugin_data_pb2.HParamsPluginData.FromString(events.SummaryMetadata(tag).plugin_data.content)


def test_hparams_session_lists_config_status_and_metrics(run_dir):
    events = _events(run_dir)
    hparams = _plugin_data(events, "_hparams_/session_start_info").session_start_info.hparams
    assert hparams["model.d_model"].number_value == 32
    assert hparams["model.norm"].string_value == "post"
    assert hparams["trainer.clip_norm"].string_value == "null"
    assert hparams["status"].string_value == "completed"
    experiment = _plugin_data(events, "_hparams_/experiment").experiment
    metrics = {(info.name.group, info.name.tag) for info in experiment.metric_infos}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert metrics == {("", f"final/{name}") for name in summary["metrics"]}  # in the run folder itself
    assert {info.name for info in experiment.hparam_infos} == set(hparams)


@pytest.mark.parametrize(
    ("mode", "epochs", "expected"),
    [
        ("auto", 3, {1, 2, 3}),
        ("auto", 50, {1, 50}),
        ("every", 2, {1, 2}),
        ("first_last", 5, {1, 5}),
        ("off", 5, set()),
    ],
)
def test_which_epochs_get_attention_maps(mode, epochs, expected):
    assert epochs_to_log(mode, epochs) == expected
