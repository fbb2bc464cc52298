"""The heads-on-real-text claim: its rule on known numbers, and its sweep end to end at toy size on a
generated parallel corpus (tiny model, 2 head counts x 2 seeds), through tx-claims."""

import json

import pytest

from tests.conftest import tx_train
from tests.test_parallel_text import _pairs
from tx_keras.claims.definitions import CLAIMS, HEADS_TEXT
from tx_keras.claims.event_scalars import diagnostics_at_end
from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import make_setting
from tx_keras.claims.verdicts import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, NOTHING_LEARNED, heads_text_verdict
from tx_keras.cli.claims import main
from tx_keras.training.callbacks.head_importance import TABLE


def _stats(**by_heads: tuple[float, ...]) -> dict:
    return {make_setting({"model.num_heads": heads[1:]}): SeedStats(v) for heads, v in by_heads.items()}


def test_the_rule_on_known_numbers():
    holds = heads_text_verdict(
        _stats(h1=(40.1, 40.5, 40.3), h8=(44.0, 44.6, 44.2), h32=(43.1, 43.5, 43.0)),
        HEADS_TEXT,
        _stats(h1=(20.0, 20.4, 20.1), h8=(23.0, 23.5, 23.2)),
    )
    assert holds.outcome == HOLDS and "(BLEU 20.17 ± 0.21)" in holds.reason
    assert holds.notes[1].startswith("32 heads against 1: higher (Welch two-sided, Holm over the two")
    worse = heads_text_verdict(_stats(h1=(44.0, 44.6, 44.2), h8=(40.1, 40.5, 40.3)), HEADS_TEXT)
    assert worse.outcome == INCONCLUSIVE and "neither significant nor shown" in worse.reason
    equal = heads_text_verdict(_stats(h1=(40.1, 40.5, 40.3), h8=(40.2, 40.4, 40.3)), HEADS_TEXT)
    assert equal.outcome == DOES_NOT_HOLD and "shown to be under 1" in equal.reason  # TOST within 1 chrF
    same = heads_text_verdict(_stats(h1=(40.0, 44.0, 42.0), h8=(41.0, 45.0, 42.5)), HEADS_TEXT)
    assert same.outcome == INCONCLUSIVE and "neither significant nor shown" in same.reason
    nothing = heads_text_verdict(_stats(h1=(10.0, 11.0, 12.0), h8=(14.0, 15.0, 16.0)), HEADS_TEXT)
    assert nothing.outcome == NOTHING_LEARNED and "8 heads stays below the floor 20" in nothing.reason
    missing = heads_text_verdict(_stats(h1=(40.0, 41.0)), HEADS_TEXT)
    assert missing.outcome == INCONCLUSIVE and "8 heads" in missing.reason


def _corpus(path):
    """The small English-French corpus of test_parallel_text, as a plain two-column TSV."""
    path.write_text("".join(f"{en}\t{fr}\n" for en, fr in _pairs()), encoding="utf-8")
    return path


TOY = [
    "model.num_heads=1,8",
    "seed=0,1",
    "model.num_encoder_layers=1",
    "model.num_decoder_layers=1",
    "model.d_model=32",
    "model.dff=64",
    "data.num_validation=8",
    "data.num_test=8",
    "data.vocab_size=120",
    "trainer.max_train_minutes=null",
    "trainer.epochs=2",
    "trainer.batch_tokens=128",
    "trainer.checkpoint_every=0",
    "logging.probes=4",
    "hydra.sweep.subdir=${hydra.job.num}",  # folder names of all these overrides would be too long
]


@pytest.mark.slow  # 4 jobs: ~95 s on the 2-core CPU while other tests ran
def test_the_sweep_logs_diversity_and_importance_and_tx_claims_judges_it(tmp_path, capsys):
    sweep_dir = tmp_path / "claim_heads_text"
    corpus = _corpus(tmp_path / "pairs.tsv")
    overrides = [f"data.path={corpus}", f"data.cache_dir={tmp_path / 'cache'}", *TOY]
    result = tx_train("sweep=claim_heads_text", *overrides, f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    runs = {path.parent: json.loads(path.read_text()) for path in sweep_dir.glob("*/summary.json")}
    assert len(runs) == 4 and {s["status"] for s in runs.values()} == {"completed"}
    for run_dir, summary in runs.items():
        heads = summary["config"]["model"]["num_heads"]
        assert summary["config"]["export"]["beam_width"] == 1 and "validation_chrf" in summary["metrics"]
        increase = summary["head_importance"]["loss_increase"]
        assert set(increase) == {"encoder_self/layer_1", "decoder_self/layer_1", "cross/layer_1"}
        assert all(len(values) == heads for values in increase.values())
        assert "| cross/layer_1 |" in (run_dir / TABLE).read_text()
        divergence = diagnostics_at_end(run_dir, "head_divergence")
        focused = diagnostics_at_end(run_dir, "focused_heads")
        assert set(divergence) == set(focused) == set(increase)
        if heads == 1:
            assert set(divergence.values()) == {0.0}
        else:
            assert all(0.0 < value <= 1.0 for value in divergence.values())
    out = tmp_path / "report"
    main([str(sweep_dir), "--out", str(out)])
    assert capsys.readouterr().out.startswith("heads_text: ")
    report = (out / "report.md").read_text()
    assert f"## 1. {CLAIMS['heads_text'].title}: " in report
    assert "`layers/head_divergence` at the end of training" in report
    assert "| num_heads=8 |" in report and "validation_bleu (mean ± sd)" in report


def test_without_a_corpus_every_job_stops_at_once_in_one_line(tmp_path, tx_train_here, monkeypatch):
    """Through tx-train's main in this process (its sweep runs every job in the launching process anyway);
    the sweep's exit code, a class attribute, is put back after."""
    from tx_keras.launch.sweep_report import SweepReport

    monkeypatch.setattr(SweepReport, "exit_code", SweepReport.exit_code)
    result = tx_train_here("sweep=claim_heads_text", cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    failed = [line for line in result.stderr.splitlines() if "failed: data.path is required" in line]
    assert len(failed) == 9 and "9 jobs: 9 failed" in result.stderr


@pytest.mark.parametrize("key", ["beside", "final"])
def test_the_claim_is_known_to_tx_claims(key):
    claim = CLAIMS["heads_text"]
    assert claim.sweep == "claim_heads_text" and claim.metric == "validation_chrf"
    assert getattr(claim, key)


def test_the_diversity_table_orders_settings_and_layers_and_drops_the_corpus_path():
    from tx_keras.claims.assessment import layer_table

    values = {
        make_setting({"model.num_heads": 8, "data.path": "/data/eng-fra.tsv"}): {
            "cross/layer_1": 0.1,
            "encoder_self/layer_2": 0.2,
            "encoder_self/layer_1": 0.3,
        },
        make_setting({"model.num_heads": 1, "data.path": "/data/eng-fra.tsv"}): {"cross/layer_1": 0.0},
    }
    lines = layer_table(values, ("model.num_heads",)).splitlines()
    assert lines[0] == "| setting | encoder_self/layer_1 | encoder_self/layer_2 | cross/layer_1 |"
    assert lines[2] == "| num_heads=1 |  |  | 0.000 |"
    assert lines[3] == "| num_heads=8 | 0.300 | 0.200 | 0.100 |"
