"""The Attention tab's routes through werkzeug's test client, over written event files and a real run."""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.application import TensorBoardWSGI
from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
from tensorboard.compat.proto import summary_pb2
from tensorboard.plugins import base_plugin
from werkzeug.test import Client

from tx_keras.explorer.plugin import AttentionExplorerLoader
from tx_keras.explorer.run_folders import run_folder, run_label, saved_model
from tx_keras.explorer.translators import Translators, attention_record
from tx_keras.explorer.typed_sentence import MAX_CHARACTERS
from tx_keras.export.saved_model_loader import load_saved_model
from tx_keras.run_folder.attention_format import KINDS, PLUGIN_NAME, ProbeAttention
from tx_keras.run_folder.attention_summaries import write_attention

PREFIX = f"/data/plugin/{PLUGIN_NAME}"
QUERIES, KEYS = ["<sos>", "le", "chat"], ["the", "cat", "<eos>"]


def _weights(step: int, kind: str) -> np.ndarray:
    """(layers=2, heads=3, queries, keys) rows that sum to 1 and differ by step and kind."""
    rng = np.random.default_rng(step * 10 + KINDS.index(kind))
    raw = rng.random((2, 3, len(QUERIES), len(KEYS)))
    return (raw / raw.sum(-1, keepdims=True)).astype(np.float16)


def _write_run(folder: Path, steps: list[int]) -> None:
    """A run folder as tx-train leaves it: run.json and the explorer's summaries for one probe."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{}")
    with tf.summary.create_file_writer(str(folder)).as_default():
        for step in steps:
            records = [
                (ProbeAttention(0, kind, QUERIES, KEYS, "the cat", "le chat"), _weights(step, kind))
                for kind in KINDS
            ]
            write_attention(records, step)


def _next_second() -> None:
    """Wait into the next second before a run's next event file, as a resumed run's comes later: two files
    one process opens in the same second differ only by a counter, which TensorBoard's watcher compares as
    text ("100" before "99"), so it would skip the newer one."""
    time.sleep(1.01 - time.time() % 1)


def _write_old_run(folder: Path) -> None:
    """An older run: scalars only, plus a summary of the plugin in a format version this code cannot read."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{}")
    alien = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name=PLUGIN_NAME, content=json.dumps({"version": 99}).encode()
        ),
        data_class=summary_pb2.DATA_CLASS_TENSOR,
    )
    with tf.summary.create_file_writer(str(folder)).as_default():
        tf.summary.scalar("epoch_loss", 1.0, step=1)
        tf.summary.write("attention_explorer/probe_1/cross", tf.zeros([1, 1, 2, 2]), step=1, metadata=alien)


def _board(logdir: Path):
    """The plugin as TensorBoard loads it, over `logdir`; returns (client, multiplexer, plugin)."""
    multiplexer = plugin_event_multiplexer.EventMultiplexer(tensor_size_guidance={PLUGIN_NAME: 0})
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(logdir))
    context = base_plugin.TBContext(data_provider=provider, logdir=str(logdir), multiplexer=multiplexer)
    plugin = AttentionExplorerLoader().load(context)
    return Client(TensorBoardWSGI([plugin], data_provider=provider)), multiplexer, plugin


@pytest.fixture()
def board(tmp_path):
    _write_run(tmp_path / "sweep" / "0_heads=3", steps=[1, 2, 4])
    _write_old_run(tmp_path / "sweep" / "1_old")
    client, multiplexer, _ = _board(tmp_path / "sweep")
    return client, multiplexer, tmp_path / "sweep"


def _json(response):
    assert response.headers["Content-Type"].startswith("application/json"), response.headers
    return json.loads(response.get_data(as_text=True))


def test_tab_is_listed_active_and_named_attention(board):
    client, _, _ = board
    listing = _json(client.get("/data/plugins_listing"))[PLUGIN_NAME]
    assert listing["enabled"] is True
    assert listing["tab_name"] == "Attention"
    assert listing["loading_mechanism"] == {"type": "IFRAME", "module_path": f"{PREFIX}/index.js"}


def test_static_frontend_is_served(board):
    client, _, _ = board
    for name, content_type in [("index.js", "text/javascript"), ("views.js", "text/javascript")]:
        response = client.get(f"{PREFIX}/{name}")
        assert response.status_code == 200 and response.headers["Content-Type"].startswith(content_type)
    assert "export async function render" in client.get(f"{PREFIX}/index.js").get_data(as_text=True)
    assert client.get(f"{PREFIX}/explorer.css").headers["Content-Type"].startswith("text/css")


def test_runs_lists_probes_kinds_and_every_step_and_skips_old_data(board):
    client, _, _ = board
    body = _json(client.get(f"{PREFIX}/runs"))
    (run,) = body["runs"]  # the old run (scalars, unknown format) is not offered
    assert run["run"] == "0_heads=3" and run["folder"] == "0_heads=3"
    assert run["steps"] == [1, 2, 4]
    assert run["probes"] == [{"probe": 0, "source": "the cat", "reference": "le chat", "kinds": list(KINDS)}]
    assert body["translatable"] == [] and body["max_characters"] == MAX_CHARACTERS
    assert body["labels"] == {"0_heads=3": "0_heads=3"}  # in a sweep folder, runs are their folders


def test_a_run_folder_served_alone_is_named_after_its_folder(tmp_path):
    """`tx-board RUN_FOLDER`: TensorBoard calls the logdir's own run `.`; the run menus show its name."""
    _write_run(tmp_path / "tatoeba_small", steps=[1])
    client, _, _ = _board(tmp_path / "tatoeba_small")
    body = _json(client.get(f"{PREFIX}/runs"))
    (run,) = body["runs"]
    assert run["run"] == "." and run["folder"] == "."  # what the routes are asked with stays TensorBoard's
    assert body["labels"] == {".": "tatoeba_small"}
    assert run_label(tmp_path / "tatoeba_small", ".") == "tatoeba_small"
    assert run_label(tmp_path, "tatoeba_small/attention") == "tatoeba_small/attention"


@pytest.mark.parametrize("kind", KINDS)
def test_attention_returns_the_logged_float16_weights_exactly(board, kind):
    client, _, _ = board
    body = _json(
        client.get(f"{PREFIX}/attention", query_string={"run": "0_heads=3", "probe": 0, "kind": kind})
    )
    assert body["step"] == 4 and body["steps"] == [1, 2, 4]  # no step: the last one
    assert body["queries"] == QUERIES and body["keys"] == KEYS
    assert body["head_labels"] == ["head 1", "head 2", "head 3"]
    np.testing.assert_array_equal(np.array(body["weights"], np.float16), _weights(4, kind))


def test_attention_step_falls_back_to_the_nearest_earlier_logged_epoch(board):
    client, _, _ = board
    query = {"run": "0_heads=3", "probe": 0, "kind": "cross"}
    assert _json(client.get(f"{PREFIX}/attention", query_string={**query, "step": 3}))["step"] == 2
    assert _json(client.get(f"{PREFIX}/attention", query_string={**query, "step": 1}))["step"] == 1


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ({"run": "0_heads=3", "probe": 0, "kind": "sideways"}, 400, "kind must be one of"),
        ({"run": "0_heads=3", "probe": "one", "kind": "cross"}, 400, "whole numbers"),
        ({"run": "0_heads=3", "probe": 5, "kind": "cross"}, 404, "no cross attention for probe 6"),
        ({"run": "nowhere", "probe": 0, "kind": "cross"}, 404, "no attention data"),
        ({"run": "1_old", "probe": 0, "kind": "cross"}, 404, "no attention data"),
    ],
)
def test_attention_refusals_are_json_messages(board, query, status, words):
    client, _, _ = board
    response = client.get(f"{PREFIX}/attention", query_string=query)
    assert response.status_code == status
    assert words in _json(response)["error"]


def test_a_run_folder_deleted_while_open_gives_a_clear_404(board):
    client, multiplexer, logdir = board
    shutil.rmtree(logdir / "0_heads=3")
    multiplexer.Reload()  # what TensorBoard's reload thread does every few seconds
    assert _json(client.get(f"{PREFIX}/runs"))["runs"] == []
    response = client.get(
        f"{PREFIX}/attention", query_string={"run": "0_heads=3", "probe": 0, "kind": "cross"}
    )
    assert response.status_code == 404 and "deleted" in _json(response)["error"]


def test_a_growing_run_shows_new_epochs_after_a_reload(board):
    client, multiplexer, logdir = board
    _next_second()
    with tf.summary.create_file_writer(str(logdir / "0_heads=3")).as_default():
        write_attention(
            [(ProbeAttention(0, "cross", QUERIES, KEYS, "the cat", "le chat"), _weights(5, "cross"))], 5
        )
    multiplexer.Reload()
    body = _json(
        client.get(f"{PREFIX}/attention", query_string={"run": "0_heads=3", "probe": 0, "kind": "cross"})
    )
    assert body["steps"] == [1, 2, 4, 5] and body["step"] == 5


def test_runs_reads_the_weights_for_the_steps_only_when_a_run_grew(tmp_path):
    _write_run(tmp_path / "logs" / "a", steps=[1, 2])
    client, multiplexer, plugin = _board(tmp_path / "logs")
    reads = []
    read_tensors = plugin._provider.read_tensors
    plugin._provider.read_tensors = lambda *args, **kwargs: reads.append(1) or read_tensors(*args, **kwargs)
    for _ in range(3):  # the page polls
        assert _json(client.get(f"{PREFIX}/runs"))["runs"][0]["steps"] == [1, 2]
    assert len(reads) == 1
    _next_second()
    with tf.summary.create_file_writer(str(tmp_path / "logs" / "a")).as_default():
        write_attention(
            [(ProbeAttention(0, "cross", QUERIES, KEYS, "the cat", "le chat"), _weights(3, "cross"))], 3
        )
    multiplexer.Reload()
    # probe_1/cross is the tag the steps are read from, and it grew
    assert _json(client.get(f"{PREFIX}/runs"))["runs"][0]["steps"] == [1, 2, 3]
    assert len(reads) == 2


def test_run_folder_never_leaves_the_logdir(tmp_path):
    (tmp_path / "logs" / "a" / "attention").mkdir(parents=True)
    (tmp_path / "logs" / "a" / "run.json").write_text("{}")
    (tmp_path / "run.json").write_text("{}")  # a run folder above the logdir must not be found
    logdir = tmp_path / "logs"
    assert run_folder(logdir, "a/attention") == (logdir / "a").resolve()
    assert run_folder(logdir, "../") is None
    assert run_folder(logdir, "b") is None


def test_summary_json_cannot_point_outside_its_run_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    (outside / "saved_model.pb").parent.mkdir(parents=True)
    (outside / "saved_model.pb").write_bytes(b"")
    run = tmp_path / "logs" / "a"
    (run / "export" / "saved_model").mkdir(parents=True)
    (run / "export" / "saved_model" / "saved_model.pb").write_bytes(b"")
    for exported in ("../../elsewhere", str(outside)):
        (run / "summary.json").write_text(json.dumps({"export": exported}))
        assert saved_model(run) == run / "export" / "saved_model"  # the default, not the outside one
    (run / "summary.json").write_text(json.dumps({"export": "export/saved_model"}))
    assert saved_model(run) == run / "export" / "saved_model"


def test_runs_forgets_the_steps_of_deleted_runs(tmp_path):
    _write_run(tmp_path / "logs" / "a", steps=[1])
    client, _, plugin = _board(tmp_path / "logs")
    plugin._steps_cache[("gone", "attention_explorer/probe_1/cross")] = ((1, 1.0), [1])
    assert _json(client.get(f"{PREFIX}/runs"))["runs"][0]["steps"] == [1]
    assert set(plugin._steps_cache) == {("a", "attention_explorer/probe_1/cross")}


def test_translate_refuses_an_oversized_body_before_reading_it_all(tmp_path):
    client, _, _ = _board(tmp_path)
    body = json.dumps({"run": "a", "text": "x" * 100_000})
    response = client.post(f"{PREFIX}/translate", data=body, content_type="application/json")
    assert response.status_code == 413 and "bytes" in _json(response)["error"]


@pytest.mark.parametrize(("given", "kept"), [({}, 0), ({PLUGIN_NAME: 7}, 7)])
def test_loader_keeps_every_logged_epoch_unless_told_otherwise(given, kept):
    flags = argparse.Namespace(samples_per_plugin=dict(given))
    AttentionExplorerLoader().fix_flags(flags)
    assert flags.samples_per_plugin[PLUGIN_NAME] == kept


# --- own sentence, through a real tiny run's SavedModel -------------------------------------------------


@pytest.fixture(scope="module")
def real_board(tiny_run):
    result, run_dir = tiny_run
    assert (run_dir / "export" / "saved_model" / "saved_model.pb").is_file(), result.stderr[-2000:]
    client, _, plugin = _board(run_dir.parent)
    return client, plugin, run_dir.name


def _translate(client, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(f"{PREFIX}/translate", data=data, content_type="application/json")


def test_real_run_logs_its_probes_and_offers_its_export(real_board):
    client, _, name = real_board
    body = _json(client.get(f"{PREFIX}/runs"))
    assert body["translatable"] == [name]
    (run,) = body["runs"]
    assert run["folder"] == name and len(run["probes"]) == 2 and run["steps"] == [0, 1, 2]
    record = _json(
        client.get(f"{PREFIX}/attention", query_string={"run": run["run"], "probe": 1, "kind": "cross"})
    )
    weights = np.array(record["weights"])
    assert weights.shape == (1, 2, len(record["queries"]), len(record["keys"]))  # tiny: 1 layer, 2 heads
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=0.01)


def test_translate_returns_the_saved_models_own_output_and_loads_the_model_once(real_board, tiny_run):
    """The route answers what the run's SavedModel itself answers (translation, tokens, mean cross-attention),
    and a second sentence reuses the loaded model: exactly one load for two sentences."""
    client, plugin, name = real_board
    plugin._translators = Translators()  # a fresh cache: earlier tests of the module may have loaded it
    saved = load_saved_model(tiny_run[1] / "export" / "saved_model")
    for sentence in ("the cat sees the dog", "  tom visits paris  "):
        body = _json(_translate(client, {"run": name, "text": sentence}))
        own = saved.signatures["translate_with_attention"](texts=tf.constant([sentence.strip()]))
        expected = attention_record({key: value.numpy() for key, value in own.items()})
        assert body["sentence"] == sentence.strip()
        assert body["translation"] == expected["translation"] and body["translation"]
        assert body["queries"] == expected["queries"] and body["keys"] == expected["keys"]
        assert body["keys"][-1] == "<eos>" and len(body["keys"]) == len(sentence.split()) + 1
        weights = np.array(body["weights"])
        assert weights.shape == (1, 1, len(body["queries"]), len(body["keys"]))  # export.attention=mean
        np.testing.assert_allclose(weights, expected["weights"], atol=1e-4)
        assert body["head_labels"] == ["mean of heads"]
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=0.01)
    assert plugin._translators.loads == 1  # loaded on the first sentence, cached for the second


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"text": "   "}, 400, "type a sentence"),
        ({"text": "a " * MAX_CHARACTERS}, 413, f"at most {MAX_CHARACTERS}"),
        ({"text": "tab\tand\x00nul"}, 400, "control"),
        ({"text": 42}, 400, "JSON string"),
        ("{not json", 400, "not valid JSON"),
        ([1, 2], 400, "JSON object"),
        ({"text": "hello", "run": "../../etc"}, 404, "no export"),
    ],
)
def test_bad_sentences_get_a_json_message_not_a_server_error(real_board, body, status, words):
    client, _, name = real_board
    if isinstance(body, dict):
        body = {"run": name, **body}
    response = _translate(client, body)
    assert response.status_code == status
    assert words in _json(response)["error"]


def test_translate_wants_a_json_post(real_board):
    client, _, name = real_board
    response = client.get(f"{PREFIX}/translate")
    assert response.status_code == 405 and "POST" in _json(response)["error"]
    body = json.dumps({"run": name, "text": "the cat"})
    response = client.post(f"{PREFIX}/translate", data=body, content_type="text/plain")
    assert response.status_code == 415 and "application/json" in _json(response)["error"]
