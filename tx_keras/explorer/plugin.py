"""The Attention tab: TensorBoard routes over the logged attention tensors and the runs' SavedModels.

Routes (under /data/plugin/tx_attention/): the page's static files; `runs` (what was logged where);
`attention` (one probe, kind and epoch: every layer and head); `rollout` (the same, rolled out through
the layers: rollout.py); `translate` (POST a typed sentence: its translation and cross-attention from
that run's SavedModel); `explain` (POST a probe or a typed sentence, optionally heads to knock out:
confidence, attribution, rollout and knock-out from the run's Keras model: sentence_explanation.py).
Every refusal is JSON `{"error": message}` with a 4xx status, whatever the body or content type (500 only
for a model that fails to run), which the page shows as it is.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
from tensorboard.backend import http_util
from tensorboard.data import provider
from tensorboard.plugins import base_plugin
from werkzeug import Request, Response

from tx_keras.explorer.rollout import cross_rollout, self_rollout
from tx_keras.explorer.run_folders import run_folder, run_label, saved_model
from tx_keras.explorer.run_models import RunModels
from tx_keras.explorer.translators import Translators
from tx_keras.explorer.typed_sentence import MAX_CHARACTERS, SentenceError, check_sentence
from tx_keras.run_folder.attention_format import KINDS, PLUGIN_NAME, ProbeAttention, tag_for
from tx_keras.special_tokens import EOS, SPECIALS

STATIC = Path(__file__).parent / "static"
_CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
_MAX_STEPS = 100_000  # read every logged epoch (the loader also keeps them all)
_MAX_BODY = 16 * 1024  # bytes of a POST body read at most (a sentence is MAX_CHARACTERS long)
_STEPS = (4, 128)  # integration steps a request may ask for: fewer is too coarse, more only slow
_LOG = logging.getLogger(__name__)


def _json(request: Request, body: dict, status: int = 200) -> Response:
    return http_util.Respond(request, body, "application/json", code=status)


def _error(request: Request, message: str, status: int) -> Response:
    return _json(request, {"error": message}, status)


def _body(request: Request, shape: str) -> dict:
    """The request's JSON object, or SentenceError with the 4xx that says what is wrong with it."""
    if request.method != "POST":
        raise SentenceError(f"POST a JSON body {shape}", 405)
    if request.mimetype != "application/json":  # also keeps other web sites' plain form posts out
        raise SentenceError("send the body as Content-Type: application/json", 415)
    raw = request.stream.read(_MAX_BODY + 1)  # bounded: get_data() would read any size into memory
    if len(raw) > _MAX_BODY:
        raise SentenceError(f"the body is over {_MAX_BODY} bytes", 413)
    try:
        body = json.loads(raw.decode("utf-8") or "null")
    except (ValueError, RecursionError):  # UnicodeDecodeError included; RecursionError: [[[[... nested
        raise SentenceError("the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise SentenceError(f"send a JSON object {shape}")
    return body


def _whole(body: dict, name: str, default: int | None, low: int, high: int) -> int | None:
    """body[name] as a whole number in [low, high] (default when absent); SentenceError otherwise."""
    value = body.get(name, default)
    if value is default:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise SentenceError(f"`{name}` must be a whole number from {low} to {high}")
    return value


def _labels(record: ProbeAttention) -> list[str]:
    """A logged probe's labels: its decoder inputs (SOS, then the reference) shifted by one, EOS last."""
    return [*record.queries[1:], SPECIALS[EOS]]


def _probe_answer(
    run: str,
    probe: int,
    kind: str,
    record: ProbeAttention,
    shown: int,
    steps: list,
    weights: list,
    heads: list,
) -> dict:
    """The attention and rollout routes' answer: one logged probe's tokens and sentences, the step shown
    and every logged step, and the (layers, heads, queries, keys) weights drawn with their labels."""
    return {
        "run": run,
        "probe": probe,
        "kind": kind,
        "step": shown,
        "steps": steps,
        "queries": record.queries,
        "keys": record.keys,
        "source": record.source,
        "reference": record.reference,
        "weights": weights,
        "head_labels": heads,
    }


class AttentionExplorerPlugin(base_plugin.TBPlugin):
    """Reads through TensorBoard's data provider, so it finds the summaries by plugin name in whichever
    run folder wrote them (e.g. `RUN/attention` or the run root), old and growing runs included."""

    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self._provider = context.data_provider
        self._logdir = Path(context.logdir).expanduser() if context.logdir else None
        self._translators = Translators()
        self._models = RunModels()
        self._steps_cache: dict[tuple[str, str], tuple[tuple, list[int]]] = {}

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="Attention")

    def is_active(self) -> bool:
        """Active through its data (TensorBoard checks the plugin name itself); nothing else to look at."""
        return False

    def get_plugin_apps(self) -> dict:
        apps = {
            f"/{path.name}": self._static(path) for path in STATIC.iterdir() if path.suffix in _CONTENT_TYPES
        }
        apps.update(
            {
                "/runs": self._serve_runs,
                "/attention": self._serve_attention,
                "/rollout": self._serve_rollout,
                "/translate": self._serve_translate,
                "/explain": self._serve_explain,
            }
        )
        return apps

    @staticmethod
    def _static(path: Path):
        @Request.application
        def serve(request: Request) -> Response:
            return http_util.Respond(request, path.read_bytes(), _CONTENT_TYPES[path.suffix])

        return serve

    def _ids(self, request: Request) -> tuple:
        from tensorboard import plugin_util

        return plugin_util.context(request.environ), plugin_util.experiment_id(request.environ)

    def _series(self, request: Request) -> dict[str, dict[str, tuple[ProbeAttention, tuple]]]:
        """run -> tag -> (its labels, (last step, last wall time)), skipping summaries of a format this
        version cannot read."""
        ctx, eid = self._ids(request)
        found = self._provider.list_tensors(ctx, experiment_id=eid, plugin_name=PLUGIN_NAME)
        records: dict[str, dict[str, tuple[ProbeAttention, tuple]]] = {}
        for run, tags in found.items():
            for tag, series in tags.items():
                try:
                    record = ProbeAttention.from_content(series.plugin_content)
                except (ValueError, TypeError):
                    _LOG.warning("Attention tab: skipping %s in %s (unknown format)", tag, run)
                    continue
                records.setdefault(run, {})[tag] = (record, (series.max_step, series.max_wall_time))
        return records

    def _records(self, request: Request) -> dict[str, dict[str, ProbeAttention]]:
        """run -> tag -> its labels."""
        return {
            run: {tag: record for tag, (record, _) in tags.items()}
            for run, tags in self._series(request).items()
        }

    def _steps(self, request: Request, run: str, tag: str, stamp: tuple) -> list[int]:
        """The steps logged under `tag`, read again only when its last step or write time changed: the
        page asks every few seconds, and reading means fetching every step's weights."""
        cached = self._steps_cache.get((run, tag))
        if cached is None or cached[0] != stamp:
            cached = stamp, [datum.step for datum in self._read(request, run, tag)]
            self._steps_cache[(run, tag)] = cached
        return cached[1]

    def _read(self, request: Request, run: str, tag: str) -> list:
        ctx, eid = self._ids(request)
        data = self._provider.read_tensors(
            ctx,
            experiment_id=eid,
            plugin_name=PLUGIN_NAME,
            downsample=_MAX_STEPS,
            run_tag_filter=provider.RunTagFilter(runs=[run], tags=[tag]),
        )
        return sorted(data.get(run, {}).get(tag, []), key=lambda datum: datum.step)

    def _translatable(self, request: Request) -> dict[str, Path]:
        """Run folder (relative to the logdir) -> its SavedModel, for every run folder with an export."""
        if self._logdir is None:
            return {}
        ctx, eid = self._ids(request)
        exports: dict[str, Path] = {}
        for run in self._provider.list_runs(ctx, experiment_id=eid):
            folder = run_folder(self._logdir, run.run_name)
            model = folder and saved_model(folder)
            if model:
                name = folder.relative_to(self._logdir.resolve()).as_posix()
                exports[name] = model
        return exports

    @Request.application
    def _serve_runs(self, request: Request) -> Response:
        runs = []
        listed = set()
        for run, series in sorted(self._series(request).items()):
            probes: dict[int, dict] = {}
            for record, _ in series.values():
                probe = probes.setdefault(
                    record.probe,
                    {
                        "probe": record.probe,
                        "source": record.source,
                        "reference": record.reference,
                        "kinds": [],
                    },
                )
                probe["kinds"].append(record.kind)
            for probe in probes.values():
                probe["kinds"] = [kind for kind in KINDS if kind in probe["kinds"]]
            tag = min(series)
            listed.add((run, tag))
            steps = self._steps(request, run, tag, series[tag][1])
            folder = run_folder(self._logdir, run) if self._logdir else None
            runs.append(
                {
                    "run": run,
                    "folder": folder.relative_to(self._logdir.resolve()).as_posix() if folder else None,
                    "probes": [probes[i] for i in sorted(probes)],
                    "steps": steps,
                }
            )
        for gone in set(self._steps_cache) - listed:  # deleted runs: the cache stays as small as the list
            self._steps_cache.pop(gone, None)
        translatable = sorted(self._translatable(request))
        names = {run["run"] for run in runs} | set(translatable)
        labels = {name: self._label(name) for name in sorted(names)}
        return _json(
            request,
            {"runs": runs, "translatable": translatable, "labels": labels, "max_characters": MAX_CHARACTERS},
        )

    def _label(self, name: str) -> str:
        """The run menus' name for a run or run folder (`.` is the logdir's own folder: named after it)."""
        return run_label(self._logdir, name) if self._logdir is not None else name

    def _asked(self, request: Request, rolled_out: bool) -> tuple:
        """(run, kind, probe, its record, kind -> (step shown, weights, every logged step)) of an attention
        or rollout request: the weights of its kind, and for a cross rollout also of the self-attention it
        runs through. SentenceError with the 4xx that says what is wrong with the request."""
        run, kind = request.args.get("run", ""), request.args.get("kind", "")
        try:
            probe = int(request.args.get("probe", ""))
            step = int(request.args["step"]) if request.args.get("step") else None
        except ValueError:
            raise SentenceError("probe and step must be whole numbers") from None
        if kind not in KINDS:
            raise SentenceError(f"kind must be one of {', '.join(KINDS)}")
        tags = self._records(request).get(run)
        if tags is None:
            raise SentenceError(f"run {run!r} has no attention data now (its folder was deleted?)", 404)
        needed = KINDS if rolled_out and kind == "cross" else (kind,)
        records = {name: tags.get(tag_for(probe, name)) for name in needed}
        missing = [name for name, record in records.items() if record is None]
        if missing:
            raise SentenceError(
                f"run {run!r} logged no {', '.join(missing)} attention for probe {probe + 1}", 404
            )
        read = {
            name: self._logged_weights(request, run, record.tag, step) for name, record in records.items()
        }
        return run, kind, probe, records[kind], read

    @Request.application
    def _serve_attention(self, request: Request) -> Response:
        try:
            run, kind, probe, record, read = self._asked(request, rolled_out=False)
        except SentenceError as error:
            return _error(request, str(error), error.status)
        shown, weights, steps = read[kind]
        heads = [f"head {h + 1}" for h in range(weights.shape[1])]
        drawn = weights.tolist()  # float16 values, exact in float32 and in JSON
        return _json(request, _probe_answer(run, probe, kind, record, shown, steps, drawn, heads))

    @Request.application
    def _serve_translate(self, request: Request) -> Response:
        try:
            body = _body(request, "{run, text}")
            sentence = check_sentence(body.get("text"))
            result = self._translators.translate(self._export(request, body.get("run")), sentence)
        except SentenceError as error:
            return _error(request, str(error), error.status)
        except Exception as error:  # a broken export: say so in the page, keep serving
            _LOG.exception("Attention tab: translating failed")
            return _error(request, f"this run's export could not translate: {type(error).__name__}", 500)
        return _json(request, {"run": body["run"], "sentence": sentence, **result})

    def _export(self, request: Request, folder: object) -> Path:
        exports = self._translatable(request)
        if not isinstance(folder, str) or folder not in exports:
            raise SentenceError(f"run {folder!r} has no export here (still training, or deleted?)", 404)
        return exports[folder]

    def _logged_weights(self, request: Request, run: str, tag: str, step: int | None) -> tuple:
        """(datum at `step` or the nearest earlier logged one, every logged step) of one tag, float32."""
        data = self._read(request, run, tag)
        if not data:
            raise SentenceError(f"run {run!r} has no readable {tag.rsplit('/', 1)[-1]} attention yet", 404)
        earlier = [datum for datum in data if step is None or datum.step <= step]
        datum = earlier[-1] if earlier else data[0]
        logged = datum.numpy  # float16 bits in uint16 (attention_summaries); float16 in older runs
        weights = (logged.view(np.float16) if logged.dtype == np.uint16 else logged).astype(np.float32)
        return datum.step, weights, [d.step for d in data]

    @Request.application
    def _serve_rollout(self, request: Request) -> Response:
        """One probe's attention rolled out through every layer (rollout.py), from the logged weights of
        one epoch: encoder or decoder self-attention, or the source words each decoder position draws on."""
        try:
            run, kind, probe, record, read = self._asked(request, rolled_out=True)
        except SentenceError as error:
            return _error(request, str(error), error.status)
        shown, weights, steps = read[kind]
        extra = {}
        if kind == "cross":
            rolled, share = cross_rollout(read["encoder_self"][1], read["decoder_self"][1], weights)
            extra["source_share"] = np.round(share, 5).tolist()
        else:
            rolled = self_rollout(weights)
        rolled = [[np.round(rolled, 5).tolist()]]  # one layer, one "head": the rollout
        answer = _probe_answer(run, probe, kind, record, shown, steps, rolled, ["rollout"])
        return _json(request, {**answer, **extra})

    def _probes(self, request: Request, folder: Path) -> list:
        """The logged probe records (cross kind: source tokens and decoder inputs) of every TensorBoard run
        inside `folder`, one per probe."""
        found = {}
        for run, tags in self._records(request).items():
            if self._logdir is not None and run_folder(self._logdir, run) == folder:
                for record in tags.values():
                    if record.kind == "cross":
                        found.setdefault(record.probe, record)
        return [found[i] for i in sorted(found)]

    @Request.application
    def _serve_explain(self, request: Request) -> Response:
        """POST {run, probe} (a TensorBoard run's logged probe) or {run, text} (a run folder with an export,
        a typed sentence), with optional `heads_off` [[kind, layer, head], ...] and `steps`."""
        try:
            body = _body(request, "{run, probe | text, heads_off?, steps?}")
            steps = _whole(body, "steps", None, *_STEPS)
            probe = _whole(body, "probe", None, 0, 10_000)
            run = body.get("run")
            if not isinstance(run, str) or self._logdir is None:
                raise SentenceError("`run` must name a run of this logdir", 404)
            if probe is None:
                sentence = check_sentence(body.get("text"))
                typed = self._translators.translate(self._export(request, run), sentence)
                folder = run_folder(self._logdir, run)
                keys, outputs = typed["keys"], typed["queries"]
                extra = {"sentence": sentence, "translation": typed["translation"]}
            else:
                record = self._records(request).get(run, {}).get(tag_for(probe, "cross"))
                folder = run_folder(self._logdir, run) if record is not None else None
                if folder is None:
                    raise SentenceError(f"run {run!r} logged no probe {probe + 1}", 404)
                keys, outputs = record.keys, _labels(record)
                extra = {"source": record.source, "reference": record.reference}
            entry = self._models.get(folder)
            probes = [
                (entry.source_ids(logged.keys), entry.target_ids(_labels(logged)))
                for logged in self._probes(request, folder)
            ]
            pair = entry.source_ids(keys), entry.target_ids(outputs)
            # Here, not at the top: these import Keras, which TensorBoard need not load to start.
            from tx_keras.explorer.knockout import checked_heads
            from tx_keras.explorer.sentence_explanation import explain

            knocked = checked_heads(entry.model, body.get("heads_off"))
            result = explain(entry, pair, probes, knocked, **({"steps": steps} if steps else {}))
        except SentenceError as error:
            return _error(request, str(error), error.status)
        except Exception as error:  # a model that fails to load or run: say so in the page, keep serving
            _LOG.exception("Attention tab: explaining failed")
            return _error(request, f"this run's model could not explain: {type(error).__name__}", 500)
        return _json(
            request,
            {"run": run, "probe": probe, "source_tokens": keys, "output_tokens": outputs, **extra, **result},
        )


class AttentionExplorerLoader(base_plugin.TBLoader):
    """Keeps every logged epoch of the tab's summaries (TensorBoard keeps 10 per tag of a third-party
    plugin by default, which would thin the epoch slider) unless `--samples_per_plugin` says otherwise."""

    def fix_flags(self, flags) -> None:
        samples = getattr(flags, "samples_per_plugin", None)
        if isinstance(samples, dict):
            samples.setdefault(PLUGIN_NAME, 0)  # 0 = keep all; the callback caps their size

    def load(self, context: base_plugin.TBContext) -> AttentionExplorerPlugin:
        return AttentionExplorerPlugin(context)
