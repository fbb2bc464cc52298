"""The "why this word?" views' numbers: rollout, attribution, confidence and head knock-out, checked by
hand on small matrices and on a real tiny run of the reverse task (tests/browser_harness.REVERSE), where
output word t is aligned with source word n-1-t; and the tab's POST routes against odd bodies."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.float_tolerance import FLOAT32
from tests.test_explorer_routes import KEYS, PREFIX, QUERIES, _board, _json, _weights, _write_run
from tx_keras.explorer.confidence import confidence
from tx_keras.explorer.rollout import cross_rollout, residual_attention, self_rollout

# --- rollout, by hand ---------------------------------------------------------------------------------


def test_rollout_of_one_layer_is_half_attention_half_identity():
    weights = np.array(
        [[[0.2, 0.8], [0.6, 0.4]], [[0.4, 0.6], [0.2, 0.8]]]
    )  # 2 heads, mean [[.3,.7],[.4,.6]]
    np.testing.assert_allclose(self_rollout(weights[None]), [[0.65, 0.35], [0.2, 0.8]])


def test_rollout_multiplies_the_layers_and_keeps_rows_summing_to_one():
    rng = np.random.default_rng(0)
    raw = rng.random((3, 4, 5, 5))
    layers = raw / raw.sum(-1, keepdims=True)
    rolled = self_rollout(layers)
    expected = residual_attention(layers[2]) @ residual_attention(layers[1]) @ residual_attention(layers[0])
    np.testing.assert_allclose(rolled, expected)
    np.testing.assert_allclose(rolled.sum(-1), 1.0)


def test_cross_rollout_follows_each_output_word_to_its_source_word():
    """Identity encoder and decoder self-attention, a cross-attention that reverses: each output word
    draws on its reversed source word only, and half of its stream comes from the source."""
    eye = np.eye(3)[None, None]
    reverse = np.eye(3)[::-1][None, None]
    source, share = cross_rollout(eye, eye, reverse)
    np.testing.assert_allclose(source, np.eye(3)[::-1])
    np.testing.assert_allclose(share, 0.5)


def test_cross_rollout_mixes_in_the_encoder_rollout():
    encoder = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # each source token attends to the other
    decoder = np.ones((1, 1, 1, 1))
    cross = np.array([[[[1.0, 0.0]]]])  # the one output word reads source word 0
    source, share = cross_rollout(encoder, decoder, cross)
    np.testing.assert_allclose(source, [[0.5, 0.5]])  # word 0 is half itself, half word 1 after a layer
    np.testing.assert_allclose(share, [0.5])


# --- confidence ---------------------------------------------------------------------------------------


def test_confidence_gives_probability_entropy_and_the_top_five():
    tokens = ["<pad>", "<sos>", "<eos>", "<unk>", "a", "b", "c"]
    logits = np.log(np.array([[0.01, 0.01, 0.08, 0.05, 0.5, 0.25, 0.10]]))
    (row,) = confidence(logits, np.array([5]), tokens)
    assert row["token"] == "b"
    assert row["probability"] == pytest.approx(0.25, abs=1e-6)
    p = np.exp(logits[0])
    assert row["entropy"] == pytest.approx(float(-(p * np.log(p)).sum()), abs=1e-6)
    assert [token for token, _ in row["top"]] == ["a", "b", "c", "<eos>", "<unk>"]
    assert [probability for _, probability in row["top"]] == pytest.approx([0.5, 0.25, 0.1, 0.08, 0.05])


# --- the rollout route over logged weights -------------------------------------------------------------


def test_rollout_route_rolls_out_the_logged_weights_of_the_asked_epoch(tmp_path):
    _write_run(tmp_path / "logs" / "a", steps=[1, 2])
    client, _, _ = _board(tmp_path / "logs")
    for kind in ("encoder_self", "decoder_self", "cross"):
        body = _json(
            client.get(f"{PREFIX}/rollout", query_string={"run": "a", "probe": 0, "kind": kind, "step": 1})
        )
        matrix = np.array(body["weights"])[0, 0]
        np.testing.assert_allclose(matrix.sum(-1), 1.0, atol=1e-4)
        assert body["step"] == 1 and body["head_labels"] == ["rollout"]
        assert body["queries"] == QUERIES and body["keys"] == KEYS
    logged = {
        kind: _weights(1, kind).astype(np.float32) for kind in ("encoder_self", "decoder_self", "cross")
    }
    expected, share = cross_rollout(logged["encoder_self"], logged["decoder_self"], logged["cross"])
    np.testing.assert_allclose(matrix, expected, atol=1e-4)
    np.testing.assert_allclose(body["source_share"], share, atol=1e-4)
    response = client.get(f"{PREFIX}/rollout", query_string={"run": "a", "probe": 3, "kind": "cross"})
    assert response.status_code == 404 and "probe 4" in _json(response)["error"]


# --- a real run of the reverse task --------------------------------------------------------------------


@pytest.fixture(scope="module")
def reverse(reverse_run):
    client, _, plugin = _board(reverse_run.parent)
    run = _json(client.get(f"{PREFIX}/runs"))["runs"][0]
    return client, plugin, run, plugin._models.get(reverse_run)


def _explain(client, body):
    return client.post(f"{PREFIX}/explain", data=json.dumps(body), content_type="application/json")


def _reverse_pairs(entry, count: int, seed: int = 7) -> list[tuple[list[str], list[str]]]:
    """`count` random source sentences of the run's task (6 words) with their reversal, EOS last on both."""
    rng = np.random.default_rng(seed)
    words = [token for token in entry.source.tokens if token.startswith("s")]
    pairs = []
    for _ in range(count):
        sentence = [words[i] for i in rng.integers(0, len(words), 6)]
        pairs.append(([*sentence, "<eos>"], [*sentence[::-1], "<eos>"]))  # EOS ends both
    return pairs


def test_the_encoder_run_from_embeddings_is_the_encoder(reverse):
    from tx_keras.explorer.attribution import _embedding_parts, encode_embedded

    *_, entry = reverse
    source = entry.source_ids(["s1", "s2", "s3", "s4", "<eos>"])
    words, baseline = _embedding_parts(entry.model, source)
    np.testing.assert_allclose(
        encode_embedded(entry.model, words + baseline, source), entry.model.encode(source), **FLOAT32
    )


def test_integrated_gradients_find_the_aligned_source_word_and_are_complete(reverse):
    """The attribution's top source token is the aligned one for >= 90 % of the output words; the
    attributions of a token add up to its log-probability change from the all-UNK baseline.

    EOS is left out of the count: at a fixed length the end follows from the count of words written, not
    from the source's EOS, and the attribution of the output EOS rightly points elsewhere (docs/explorer.md).
    """
    from tx_keras.explorer.attribution import attributions

    *_, entry = reverse
    hits = total = 0
    gaps = []
    for source, target in _reverse_pairs(entry, 10):
        found = attributions(entry.model, entry.source_ids(source), entry.target_ids(target))
        top = found["integrated_gradients"].argmax(-1)[:-1]  # the words, EOS aside
        hits += int((top == np.arange(len(source) - 2, -1, -1)).sum())
        total += len(top)
        gaps += list(np.abs(found["completeness_gap"]))
    print(f"aligned top token: {hits} of {total} words; completeness gap median {np.median(gaps):.4f}")
    assert hits >= 0.9 * total
    assert np.median(gaps) < 0.05  # 32 midpoint steps; the gap shrinks with more


def test_explain_a_probe_gives_confidence_attribution_and_rollout(reverse):
    client, _, run, entry = reverse
    body = _json(_explain(client, {"run": run["run"], "probe": 0}))
    source, outputs = body["source_tokens"], body["output_tokens"]
    assert " ".join(source[:-1]) == run["probes"][0]["source"] and outputs[-1] == "<eos>"
    assert outputs[:-1] == source[:-1][::-1]  # the reference of the reverse task
    for row, token in zip(body["confidence"], outputs, strict=True):
        assert row["token"] == token and 0 < row["probability"] <= 1 and row["entropy"] >= 0
        alternatives = [probability for _, probability in row["top"]]
        assert len(alternatives) == 5 and alternatives == sorted(alternatives, reverse=True)
        assert row["top"][0][0] == token  # the model learnt the task: the reference is its first choice
    for method in ("integrated_gradients", "gradient_x_input"):
        assert np.shape(body["attribution"][method]) == (len(outputs), len(source))
    np.testing.assert_allclose(np.sum(body["rollout"]["cross"], -1), 1.0, atol=1e-4)
    np.testing.assert_allclose(np.sum(body["rollout"]["encoder_self"], -1), 1.0, atol=1e-4)
    assert body["heads"] == {"encoder_self": [2], "decoder_self": [2], "cross": [2]}
    assert body["importance_measured_on"].startswith("validation loss")  # the run logged it
    assert set(body["importance"]) == {"encoder_self/layer_1", "decoder_self/layer_1", "cross/layer_1"}
    assert body["knockout"] is None


def test_a_typed_sentence_is_explained_on_the_saved_models_own_translation(reverse, reverse_run):
    client, plugin, _, _ = reverse
    folder = reverse_run.name
    sentence = "s1 s2 s3 s4 s5 s6"
    translated = _json(
        client.post(
            f"{PREFIX}/translate",
            data=json.dumps({"run": folder, "text": sentence}),
            content_type="application/json",
        )
    )
    body = _json(_explain(client, {"run": folder, "text": sentence}))
    assert body["translation"] == translated["translation"] == "s6 s5 s4 s3 s2 s1"
    assert body["output_tokens"] == translated["queries"] and body["source_tokens"] == translated["keys"]
    assert [row["token"] for row in body["confidence"]] == body["output_tokens"]


def test_knocking_out_heads_changes_log_probabilities_and_leaves_the_model_as_it_was(reverse):
    client, _, run, entry = reverse
    before = [np.array(weight) for weight in entry.model.get_weights()]
    plain = _json(_explain(client, {"run": run["run"], "probe": 1}))
    body = _json(
        _explain(client, {"run": run["run"], "probe": 1, "heads_off": [["cross", 0, 0], ["cross", 0, 1]]})
    )
    result = body["knockout"]
    assert result["heads_off"] == [["cross", 0, 0], ["cross", 0, 1]]
    logged = np.array([row["log_probability"] for row in plain["confidence"]])
    np.testing.assert_allclose(
        np.array(result["log_probability_after"]) - logged, result["log_probability_change"], atol=1e-5
    )
    assert np.mean(result["log_probability_change"]) < -0.5  # no cross-attention: the source is out of reach
    assert result["probe_loss"]["after"] > result["probe_loss"]["before"] + 0.5
    assert result["greedy_before"][:-1] == run["probes"][1]["source"].split()[::-1]
    for kept, now in zip(before, entry.model.get_weights(), strict=True):
        np.testing.assert_array_equal(kept, now)  # the masked rows are back bit for bit
    again = _json(_explain(client, {"run": run["run"], "probe": 1}))  # undone: the same numbers as before
    assert again["confidence"] == plain["confidence"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"probe": 0, "heads_off": [["cross", 0, 9]]}, 400, "no such head"),
        ({"probe": 0, "heads_off": [["sideways", 0, 0]]}, 400, "no such head"),
        ({"probe": 0, "heads_off": "all"}, 400, "list of"),
        ({"probe": 0, "steps": 1}, 400, "`steps`"),
        ({"probe": True}, 400, "`probe`"),
        ({"probe": 7}, 404, "no probe 8"),
        ({"text": "   "}, 400, "type a sentence"),
    ],
)
def test_explain_refusals_are_json_messages(reverse, body, status, words):
    client, _, run, _ = reverse
    target = run["run"] if "probe" in body else run["folder"]
    response = _explain(client, {"run": target, **body})
    assert response.status_code == status
    assert words in _json(response)["error"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "run": st.sampled_from(["reverse", ".", "../x", ""]) | _JSON,
        "probe": st.integers(-2, 3) | _JSON,
        "text": st.sampled_from(["s1 s2", "", "s1\x00"]) | _JSON,
        "heads_off": st.lists(
            st.lists(st.sampled_from(["cross", "x", 0, 1, 5, True]), max_size=4), max_size=3
        )
        | _JSON,
        "steps": st.integers(0, 200) | _JSON,
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(["explain", "translate"]),
    body=_FIELDS.map(json.dumps)
    | _JSON.map(json.dumps)
    | st.binary(max_size=40).map(bytes.hex)
    | st.binary(max_size=40),
    content_type=st.sampled_from(["application/json", "text/plain", "application/json; charset=utf-8", ""]),
    method=st.sampled_from(["POST", "POST", "PUT", "GET"]),
)
def test_any_body_gets_an_answer_or_a_4xx_message_never_a_server_error(
    reverse, route, body, content_type, method
):
    client, *_ = reverse
    response = client.open(f"{PREFIX}/{route}", method=method, data=body, content_type=content_type)
    assert response.status_code < 500, response.get_data(as_text=True)
    answer = _json(response)
    assert response.status_code == 200 or isinstance(answer["error"], str)
