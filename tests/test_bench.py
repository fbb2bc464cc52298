"""`tx-bench` as a user runs it: a quick run gives JSON with every figure, all positive (nothing timed)."""

import json
import subprocess
import sys

from tx_keras.benchmark.flops import forward_flops, training_flops
from tx_keras.benchmark.size import BenchSize


def test_flops_count_the_matmuls_of_the_default_size():
    size = BenchSize()
    # encoder: 2 layers x 2048 tokens x (8 d^2 + 4 T d + 4 d dff); decoder doubles the attention parts
    encoder = 2 * 2048 * (8 * 128**2 + 4 * 32 * 128 + 4 * 128 * 512)
    decoder = 2 * 2048 * (16 * 128**2 + 8 * 32 * 128 + 4 * 128 * 512)
    assert forward_flops(size) == encoder + decoder + 2048 * 2 * 128 * 2000
    assert training_flops(size) == 3 * forward_flops(size)


def test_quick_bench_prints_json_with_every_figure():
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.bench", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["peak_flops_per_s"]["float32"] > 0
    for name in ("ours", "keras_mha"):
        row = report["training"][name]
        assert row["tokens_per_s"] > 0 and row["flops_per_s"] > 0 and 0 < row["mfu"]
    assert {"float32", "float32 + fused_qkv", "float32 + xla"} <= set(report["switches"])
    assert all(row["tokens_per_s"] > 0 for row in report["switches"].values())
    assert report["ratios"]["ours/keras_mha"] > 0
    for outputs in ("4", "8"):
        rates = report["decoding"][outputs]
        assert rates["cached"] > 0 and rates["uncached"] > 0 and rates["speedup"] > 0
    assert report["decoding"]["saved_model_8"] > 0


def test_bad_size_is_one_line_error():
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.bench", "--d-model", "30", "--num-heads", "4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "tx-bench: error: --num-heads 4 must divide --d-model 30"
