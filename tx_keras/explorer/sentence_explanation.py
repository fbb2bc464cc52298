"""Everything the "why this word?" views show for one sentence pair, computed with the run's own model:
each output token's confidence, its attribution to the source tokens, the attention rollout of the model
as it stands, and, when heads are knocked out, what that changes (docs/explorer.md)."""

from __future__ import annotations

import warnings

import numpy as np

from tx_keras.explorer.attribution import DEFAULT_STEPS, attributions
from tx_keras.explorer.confidence import confidence
from tx_keras.explorer.knockout import head_grid, heads_off
from tx_keras.explorer.rollout import cross_rollout, self_rollout
from tx_keras.explorer.run_models import RunModel, decoder_input
from tx_keras.special_tokens import EOS, SOS

Pair = tuple[np.ndarray, np.ndarray]  # (1, Ts) source ids, (1, T) labels


def _forward(model, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Teacher-forced (T, V) logits and every attention map (kind -> (layers, heads, Tq, Tk))."""
    source, target = pair
    logits, attention, _ = model.trace((source, decoder_input(target)), training=False)
    maps: dict[str, list] = {}
    for name in sorted(attention, key=lambda name: int(name.rsplit("_", 1)[-1])):
        maps.setdefault(name.split("/")[0], []).append(np.asarray(attention[name])[0])
    return np.asarray(logits, np.float64)[0], {kind: np.stack(layers) for kind, layers in maps.items()}


def _log_probabilities(model, pair: Pair) -> np.ndarray:
    logits, _ = _forward(model, pair)
    shifted = logits - logits.max(-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return log_probabilities[np.arange(len(pair[1][0])), pair[1][0]]


def probe_loss(model, probes: list[Pair]) -> float | None:
    """Mean over the probes of the per-token cross-entropy (teacher-forced, no label smoothing)."""
    if not probes:
        return None
    return float(np.mean([-_log_probabilities(model, pair).mean() for pair in probes]))


def _greedy(model, source: np.ndarray) -> list[int]:
    """The model's greedy output ids through EOS (the knock-out compares greedy with greedy). The whole
    decoder per word, no cache: for one sentence in eager mode this is faster than tracing the
    exported decoders' loop (tx_keras/decoding), and the page asks one sentence at a time."""
    output = [SOS]
    memory = model.encode(source, training=False)
    with warnings.catch_warnings():  # Keras warns of the softmax over the first step's one key
        warnings.simplefilter("ignore", UserWarning)
        while len(output) <= model.max_target_length and output[-1] != EOS:
            logits = model.decode(np.asarray([output], np.int32), memory, source, training=False)
            output.append(int(np.argmax(np.asarray(logits)[0, -1])))
    return output[1:]


def importance(entry: RunModel, probes: list[Pair]) -> tuple[dict[str, list[float]], str]:
    """Each head's importance (loss increase when it alone is masked, Michel et al. 2019) and what it was
    measured on: the run's own validation measure when it logged one, else the probe sentences."""
    if entry.importance:
        return entry.importance, "validation loss (logging.head_importance)"
    key = tuple((pair[0].tobytes(), pair[1].tobytes()) for pair in probes)
    if entry.probe_importance is None or entry.probe_importance[0] != key:
        from tx_keras.diagnostics.head_importance import head_importance

        measured = head_importance(entry.model, lambda: probe_loss(entry.model, probes) or 0.0)
        entry.probe_importance = key, measured.increase
    return entry.probe_importance[1], "loss on the run's probe sentences"


def explain(
    entry: RunModel,
    pair: Pair,
    probes: list[Pair],
    knocked_out: list[tuple[str, int, int]],
    steps: int = DEFAULT_STEPS,
) -> dict:
    """The explanation of `pair` (its labels: the reference of a probe, or the model's own output for a
    typed sentence); `knocked_out` heads, if any, are masked for the knock-out part only."""
    model, tokens = entry.model, entry.target.tokens
    with entry.lock:
        logits, maps = _forward(model, pair)
        source_rollout, share = cross_rollout(maps["encoder_self"], maps["decoder_self"], maps["cross"])
        attributed = attributions(model, *pair, steps=steps)
        weights, measured_on = importance(entry, probes)
        result = {
            "confidence": confidence(logits, pair[1][0], tokens),
            "attribution": {
                name: np.round(attributed[name], 5).tolist()
                for name in ("gradient_x_input", "integrated_gradients")
            },
            "completeness_gap": np.round(attributed["completeness_gap"], 5).tolist(),
            "rollout": {
                "encoder_self": np.round(self_rollout(maps["encoder_self"]), 5).tolist(),
                "decoder_self": np.round(self_rollout(maps["decoder_self"]), 5).tolist(),
                "cross": np.round(source_rollout, 5).tolist(),
                "source_share": np.round(share, 5).tolist(),
            },
            "heads": head_grid(model),
            "importance": weights,
            "importance_measured_on": measured_on,
            "knockout": None,
        }
        if knocked_out:
            before = _log_probabilities(model, pair)
            loss_before, greedy_before = probe_loss(model, probes), _greedy(model, pair[0])
            with heads_off(model, knocked_out):
                after = _log_probabilities(model, pair)
                loss_after, greedy_after = probe_loss(model, probes), _greedy(model, pair[0])
            result["knockout"] = {
                "heads_off": [list(head) for head in knocked_out],
                "log_probability_change": np.round(after - before, 6).tolist(),
                "log_probability_after": np.round(after, 6).tolist(),
                "probe_loss": {"before": loss_before, "after": loss_after},
                "greedy_before": [tokens[i] for i in greedy_before],
                "greedy_after": [tokens[i] for i in greedy_after],
            }
    return result
