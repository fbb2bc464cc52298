"""The runs' SavedModels, each loaded once (on first use) and kept for the next sentence."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from tx_keras.explorer.run_models import unreadable
from tx_keras.explorer.typed_sentence import SentenceError
from tx_keras.export.saved_model_loader import load_saved_model

SIGNATURE = "translate_with_attention"
KEEP = 4  # SavedModels kept loaded at once: a sweep's page can visit many runs, each costs memory


def _strings(row: np.ndarray) -> list[str]:
    """Byte tokens to text up to the first padding ("")."""
    tokens = [token.decode("utf-8", "replace") for token in row]
    return tokens[: tokens.index("")] if "" in tokens else tokens


def attention_record(outputs: dict[str, np.ndarray]) -> dict:
    """`translate_with_attention`'s output for one sentence as the page draws it: rows are the tokens the
    model wrote (through EOS), columns the source tokens, weights (layers, heads, rows, columns); an export
    that averaged the heads (export.attention=mean) gives one pseudo-head."""
    keys = _strings(outputs["source_tokens"][0])
    queries = _strings(outputs["output_tokens"][0])
    if "<eos>" in queries:
        queries = queries[: queries.index("<eos>") + 1]
    weights = np.asarray(outputs["cross_attention"][0], dtype=np.float32)
    averaged = weights.ndim == 3  # (layers, T, Ts): the heads were averaged at export
    if averaged:
        weights = weights[:, None]
    weights = weights[:, :, : len(queries), : len(keys)]
    return {
        "translation": outputs["translation"][0].decode("utf-8", "replace"),
        "queries": queries,
        "keys": keys,
        "weights": np.round(weights.astype(np.float64), 4).tolist(),
        "head_labels": ["mean of heads"] if averaged else [f"head {h + 1}" for h in range(weights.shape[1])],
    }


class Translators:
    """Loads a run's SavedModel on first use and reuses it; reloads it when it was re-exported."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._loaded: OrderedDict[Path, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # how many SavedModels were loaded so far (the tests check the cache)

    def _module(self, saved_model: Path):
        stamp = (saved_model / "saved_model.pb").stat().st_mtime
        with self._lock:
            cached = self._loaded.get(saved_model)
            if cached and cached[0] == stamp:
                self._loaded.move_to_end(saved_model)
                return cached[1]
            try:
                module = load_saved_model(saved_model)
            except FileNotFoundError:
                raise  # the folder went away: translate() says so
            except Exception as error:  # cut, emptied or overwritten files: the run's, not the server's
                raise unreadable(saved_model.relative_to(saved_model.parents[1]), error) from None
            if SIGNATURE not in module.signatures:
                raise SentenceError(  # 409: the run's export, not the typed input, is what conflicts
                    f"this export has no `{SIGNATURE}` signature (exported by an old version; "
                    "re-export it with tx-export)",
                    status=409,
                )
            self.loads += 1
            self._loaded[saved_model] = (stamp, module)
            while len(self._loaded) > self.keep:
                self._loaded.popitem(last=False)
            return module

    def translate(self, saved_model: Path, sentence: str) -> dict:
        """The translation and cross-attention of one checked sentence."""
        import tensorflow as tf

        try:
            module = self._module(saved_model)
        except FileNotFoundError:
            raise SentenceError("this run's export is gone (its folder was deleted or moved)", 404) from None
        outputs = module.signatures[SIGNATURE](texts=tf.constant([sentence]))
        return attention_record({name: value.numpy() for name, value in outputs.items()})
