"""tx-bench's arithmetic, on known numbers, without timing anything: ratios with 95 % intervals from paired
windows, the rule that decides how many windows to take, FLOPs on real tokens only, the best peak of any
kernel library, and one table per machine kind (tests/test_docs_pages.py checks the docs' tables)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tx_keras.benchmark import adaptive_windows
from tx_keras.benchmark.adaptive_windows import should_stop, timed_windows
from tx_keras.benchmark.flops import forward_flops, real_forward_flops
from tx_keras.benchmark.library_peaks import best_peaks
from tx_keras.benchmark.machine_load import others_cores, primary_measure
from tx_keras.benchmark.ratio_interval import geometric_mean, ratio_interval
from tx_keras.benchmark.settings import BenchSize, Timing
from tx_keras.cli.bench import main

DOCS = Path(__file__).parent.parent / "docs"
T_975_3 = 3.1824463052837078  # Student's t, 97.5th percentile, 3 degrees of freedom (tables: 3.182)


def test_interval_of_known_windows():
    """Peer/ours seconds per step e^0.1, e^0.2, e^0.1, e^0.2: log ratios with mean 0.15 and sample sd
    0.05 * sqrt(4/3), so the half-width is t(0.975, 3) * sd / 2."""
    ours = [1.0, 2.0, 0.5, 1.0]
    theirs = [value * math.exp(log) for value, log in zip(ours, [0.1, 0.2, 0.1, 0.2], strict=True)]
    interval = ratio_interval(ours, theirs)
    half = T_975_3 * 0.05 * math.sqrt(4 / 3) / 2
    assert interval["ratio"] == pytest.approx(math.exp(0.15))
    assert interval["half_width"] == pytest.approx(half)
    assert interval["low"] == pytest.approx(math.exp(0.15 - half))  # 1.061
    assert interval["high"] == pytest.approx(math.exp(0.15 + half))  # 1.273
    # the ratio is that of the rows' geometric means: the table's ratio is its rows'
    assert geometric_mean(theirs) / geometric_mean(ours) == pytest.approx(interval["ratio"])
    # windows that agree give a point; one window is no interval
    assert ratio_interval([1.0, 2.0], [1.2, 2.4])["low"] == pytest.approx(1.2)
    with pytest.raises(ValueError, match="two windows at least"):
        ratio_interval([1.0], [1.2])


def test_stop_rule():
    timing = Timing(windows=6, target_half_width=0.03, time_cap_s=100.0)
    assert should_stop(4, 0.001, 500.0, timing) is None  # fewer than the fewest
    assert should_stop(7, 0.001, 500.0, timing) is None  # odd: one model went first more often
    assert should_stop(6, 0.03, 1.0, timing) == "narrow"
    assert should_stop(8, 0.031, 99.0, timing) is None
    assert should_stop(8, 0.031, 100.0, timing) == "time cap"


def _fake_windows(ratios: list[float]):
    """Windows where ours takes 1 s a step and the peer ratios[i] s (CPU: half of each)."""

    def one_window(window: int) -> dict:
        peer = ratios[window]
        return {"ours": (1.0, 0.5), "peer": (peer, peer / 2)}

    return one_window


def test_windows_continue_until_the_interval_is_narrow(monkeypatch):
    monkeypatch.setattr(adaptive_windows, "busy_cpu_seconds", lambda: None)  # unknown load: CPU time
    # alternating 1.1 / 1.3: the interval only narrows as windows add up (t * sd / sqrt(n))
    ratios = [1.1, 1.3] * 50
    timing = Timing(windows=4, target_half_width=0.05, time_cap_s=1e9)
    wall, cpu, stop = timed_windows(_fake_windows(ratios), [("ours", "peer")], timing, steps=1)
    n = stop["windows"]
    assert stop["reason"] == "narrow" and stop["primary"] == "cpu" and stop["others_cores"] is None
    assert len(wall["peer"]) == len(cpu["peer"]) == n and n % 2 == 0
    logs = np.log(ratios[:n])
    assert ratio_interval(cpu["ours"], cpu["peer"])["half_width"] <= 0.05
    previous = ratio_interval([1.0] * (n - 2), ratios[: n - 2])["half_width"]
    assert previous > 0.05, "it stopped at the first even count under the target, not later"
    assert np.exp(logs.mean()) == pytest.approx(ratio_interval(wall["ours"], wall["peer"])["ratio"])
    # the time cap ends a ratio that never narrows, at the first even count past the fewest windows
    wall, cpu, stop = timed_windows(
        _fake_windows([1.0, 2.0, 1.0, 2.0, 1.0, 2.0]),
        [("ours", "peer")],
        Timing(windows=3, time_cap_s=0.0),
        1,
    )
    assert stop["reason"] == "time cap" and stop["windows"] == 4


def test_cpu_time_is_primary_when_others_load_the_machine():
    # 10 busy CPU-seconds over 4 s of wall time, of which tx-bench's own 3: others kept 1.75 cores busy
    assert others_cores(100.0, 110.0, 3.0, 4.0) == pytest.approx(1.75)
    assert (
        primary_measure(1.75) == "cpu" and primary_measure(0.05) == "wall" and primary_measure(None) == "cpu"
    )
    assert others_cores(100.0, 102.0, 3.0, 4.0) == 0.0  # clocks tick apart: never below zero


def test_flops_on_real_tokens_only():
    size = BenchSize(
        d_model=4, encoder_layers=1, decoder_layers=1, num_heads=2, dff=8, batch=2, length=3, vocab=5
    )
    full = forward_flops(size)
    assert real_forward_flops(size, [3, 3], [3, 3]) == full  # no padding: every position is real
    # one row with 2 source words and 1 labelled target position, the other empty: by hand, d=4, f=8
    encoder = 2 * (8 * 16 + 4 * 4 * 8) + 4 * 2 * 2 * 4  # projections + FFN per word, scores 2 x 2
    decoder = 1 * (8 * 16) + 4 * 1 * 1 * 4  # self-attention: projections, 1 x 1 scores
    decoder += (1 + 2) * 4 * 16 + 4 * 1 * 2 * 4  # cross: q, o on 1 position, k, v on 2 words; 1 x 2
    decoder += 1 * 4 * 4 * 8 + 1 * 2 * 4 * 5  # FFN, vocabulary
    assert real_forward_flops(size, [2, 0], [1, 0]) == encoder + decoder
    assert real_forward_flops(size, [2, 0], [1, 0]) < real_forward_flops(size, [3, 2], [2, 1]) < full


def test_the_best_peak_of_any_library_is_the_ceiling():
    best = best_peaks(
        {
            "onednn": {"float32": 150e9, "bfloat16": 300e9},
            "eigen": {"float32": 110e9, "bfloat16": 40e9},
            "this process (oneDNN off)": {"float32": 155e9},
        }
    )
    assert best == {
        "float32": {"flops_per_s": 155e9, "source": "this process (oneDNN off)"},
        "bfloat16": {"flops_per_s": 300e9, "source": "onednn"},
    }


def test_one_table_is_one_machine_kind(tmp_path, capsys):
    runs = [json.loads(path.read_text()) for path in sorted((DOCS / "bench" / "zen1").glob("*.json"))[:2]]
    runs[1]["machine"]["cpu"] = "another CPU"
    for index, run in enumerate(runs):
        (tmp_path / f"{index}.json").write_text(json.dumps(run))
    with pytest.raises(SystemExit) as exit_:
        main(["--markdown", str(tmp_path / "0.json"), str(tmp_path / "1.json")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("tx-bench: error: one table is one machine kind") and error.count("\n") == 1


def test_a_gpu_run_names_its_gpu_and_is_not_one_kind_with_another_gpu(tmp_path, capsys):
    run = json.loads((DOCS / "bench" / "h200" / "1-jax.json").read_text())
    run["machine"]["gpus"] = ["NVIDIA H200 (cuda:0)"]
    other = json.loads(json.dumps(run))
    other["machine"]["gpus"] = ["NVIDIA H100 80GB HBM3 (cuda:0)"]
    for name, content in {"h200.json": run, "h100.json": other}.items():
        (tmp_path / name).write_text(json.dumps(content))
    main(["--markdown", str(tmp_path / "h200.json")])
    first = capsys.readouterr().out.splitlines()[0]
    assert "16 cores, flags `amx_bf16 amx_tile avx2 avx512_bf16 avx512_vnni avx512f avx_vnni fma`; " in first
    assert "; GPU NVIDIA H200 (cuda:0); Keras backend jax;" in first
    with pytest.raises(SystemExit) as exit_:
        main(["--markdown", str(tmp_path / "h200.json"), str(tmp_path / "h100.json")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith("tx-bench: error: one table is one machine kind")
