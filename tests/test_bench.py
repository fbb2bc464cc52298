"""`tx-bench` as a user runs it, and the rules that make its comparisons fair: matched precision and jit
within a block, parameter parity, MFU a share of the matched peak, real tokens counted, the prefix baseline
decoding exactly what the cached decoder decodes."""

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.ahead import ahead_fixture
from tx_keras.benchmark import decoding_process, decoding_turns, library_peaks, matmul_peak, peers
from tx_keras.benchmark.flops import PeakExceeded, forward_flops, training_flops, utilisation
from tx_keras.benchmark.markdown_table import markdown, row_ratios
from tx_keras.benchmark.matmul_share import forward_products, products_flops
from tx_keras.benchmark.parity import ParityError, check_parity
from tx_keras.benchmark.real_path import epoch_tokens, generated_corpus
from tx_keras.benchmark.report import NAMES, decoding_interval, pools_gain_text, render
from tx_keras.benchmark.settings import QUICK_REAL_PATH, QUICK_SIZE, BenchSettings, BenchSize, Timing
from tx_keras.benchmark.throughput import padding_share, real_tokens, synthetic_batch
from tx_keras.benchmark.training_blocks import builders, compiled_models, left_out_peers
from tx_keras.benchmark.worker_process import WorkerFailed
from tx_keras.cli.bench import main
from tx_keras.data import Vocabulary, make_dataset
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.models.real_positions import can_gather


def test_flops_count_the_matmuls_of_the_default_size():
    size = BenchSize()
    # encoder: 2 layers x 2048 tokens x (8 d^2 + 4 T d + 4 d dff); decoder doubles the attention parts
    encoder = 2 * 2048 * (8 * 128**2 + 4 * 32 * 128 + 4 * 128 * 512)
    decoder = 2 * 2048 * (16 * 128**2 + 8 * 32 * 128 + 4 * 128 * 512)
    assert forward_flops(size) == encoder + decoder + 2048 * 2 * 128 * 2000
    assert training_flops(size) == 3 * forward_flops(size)


@pytest.mark.parametrize(
    "size", [BenchSize(), QUICK_SIZE, dataclasses.replace(QUICK_SIZE, encoder_layers=3, decoder_layers=2)]
)
def test_the_timed_matmuls_are_exactly_the_counted_flops(size):
    """The matmul-only graph runs the products the FLOP count counts, no more and no fewer."""
    products = forward_products(size)
    assert products_flops(products) == training_flops(size)
    # encoder layer: fused q/k/v, scores, weighted sum, output, 2 FFN; the decoder's cross-attention adds
    # its query, fused k/v, scores, weighted sum and output; one vocabulary projection
    assert len(products) == 6 * size.encoder_layers + 11 * size.decoder_layers + 1


def test_mfu_is_a_share_of_the_peak_never_above_one():
    assert utilisation(50e9, 100e9) == 0.5
    assert utilisation(100e9, 100e9) == 1.0
    with pytest.raises(PeakExceeded, match="exceed the measured peak"):
        utilisation(101e9, 100e9)


def test_parity_refuses_counts_more_than_two_percent_apart():
    check_parity({"ours": 1000, "keras_mha": 1019, "keras_hub": 981})
    with pytest.raises(ParityError, match=r"keras_hub 1,021 \(\+2.1 %\)"):
        check_parity({"ours": 1000, "keras_mha": 1000, "keras_hub": 1021})


@pytest.mark.parametrize("peer", ["keras_mha", "keras_hub"])
def test_peers_hold_exactly_our_parameters(peer):
    if peer == "keras_hub":  # CI has no KerasHub: the skip says so (-rs), as tx-bench's table does
        pytest.importorskip("keras_hub", reason="KerasHub is not installed (pip install -e '.[bench]')")
    size = dataclasses.replace(QUICK_SIZE, vocab=37)
    assert getattr(peers, peer)(size).count_params() == peers.ours(size).count_params()


@pytest.mark.slow  # three models trained on one batch each: ~28 s loaded
def test_ours_at_every_position_does_the_peers_work_for_the_same_loss():
    """--every-position's row: the same model and objective, its step computing every position (full
    logits) where ours gathers the real ones; the first step's loss and update equal ours'."""
    size = dataclasses.replace(QUICK_SIZE, vocab=37)
    (source, target), labels = synthetic_batch(size)
    built = builders(size, False, every_position=True)
    models = {}
    for name in ("ours", "ours_every_position"):
        keras.utils.set_random_seed(0)  # the same initial weights
        models[name] = compiled_models("float32", False, {name: built[name]})[name]
    ours, every = models["ours"], models["ours_every_position"]
    assert can_gather(ours, None) and not can_gather(every, None)
    shapes = {model.name: set() for model in models.values()}
    original = ours.compute_loss.__func__

    def recording(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        shapes[self.name].add(tuple(y_pred.shape))  # traced: a gathered row count is None
        return original(self, x, y, y_pred, sample_weight, training)

    for model in models.values():
        model.compute_loss = recording.__get__(model)
    losses = [float(model.train_on_batch((source, target), labels)) for model in models.values()]
    assert shapes[ours.name] == {(None, size.vocab)}
    assert shapes[every.name] == {(size.batch, size.length, size.vocab)}
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    for mine, theirs in zip(ours.trainable_variables, every.trainable_variables, strict=True):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.slow  # tx-bench --quick (below): 2-4 min of both cores
def test_table_says_which_peer_it_left_out_and_why(quick_report, monkeypatch):
    table = render(quick_report).splitlines()
    if peers.keras_hub_installed():
        assert "keras_hub" in quick_report["parameters"] and quick_report["left_out"] == {}
    else:
        assert "keras_hub" not in quick_report["parameters"]
        assert (
            "left out: KerasHub Transformer{En,De}coder: not installed (pip install -e '.[bench]' adds it)"
            in (table)
        )
    # the docs' table says it too, in the run's note
    without = {**quick_report, "left_out": {"keras_hub": "not installed (pip install -e '.[bench]' adds it)"}}
    note = markdown([without]).split("\n1. ")[1].splitlines()[0]
    assert (
        "; left out: KerasHub Transformer{En,De}coder, not installed (pip install -e '.[bench]' adds it)"
        in note
    )
    assert "left out" not in markdown([{**quick_report, "left_out": {}}])
    monkeypatch.setattr(peers, "keras_hub_installed", lambda: False)  # both ways on any machine
    assert left_out_peers() == {"keras_hub": "not installed (pip install -e '.[bench]' adds it)"}
    monkeypatch.setattr(peers, "keras_hub_installed", lambda: True)
    assert left_out_peers() == {}


@pytest.mark.slow  # builds every peer: ~16 s loaded
def test_bench_refuses_a_peer_of_another_size(monkeypatch, capsys):
    build = peers.keras_mha
    monkeypatch.setattr(peers, "keras_mha", lambda size: build(dataclasses.replace(size, dff=2 * size.dff)))
    with pytest.raises(SystemExit) as exit_:
        main(["--quick", "--no-real-path", "--no-saved-model"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("tx-bench: error: parameter counts differ by more than 2 % from ours")
    assert "keras_mha" in error and "\n" not in error


def test_real_tokens_and_padding_share_match_a_hand_count():
    source = np.array([[5, 6, 2, 0], [7, 2, 0, 0]])
    labels = np.array([[8, 9, 2], [4, 2, 0]])
    assert real_tokens(source, labels) == 5 + 5
    assert padding_share(source, labels) == pytest.approx(1 - 10 / 14)
    # The same pairs through the pipeline: fixed batches keep the full widths (source 4, decoder 3) ...
    target = np.array([[1, 8, 9, 2], [1, 4, 2, 0]])
    fixed = make_dataset(source, target, batch_size=2, shuffle=False)
    assert epoch_tokens(fixed) == (10, 2 * 4 + 2 * 3)
    # ... bucketed ones may cut a batch down to its longest pair (source 3, decoder 3), never below
    real, positions = epoch_tokens(
        make_dataset(source, target, batch_size=2, shuffle=False, batching="bucket")
    )
    assert real == 10 and 2 * 3 + 2 * 3 <= positions <= 2 * 4 + 2 * 3


def test_generated_corpus_is_shaped_like_tatoeba_rows():
    source, target = generated_corpus(500, 100, seed=1)
    source_lengths, target_lengths = np.count_nonzero(source, 1), np.count_nonzero(target, 1)
    assert 6 <= np.median(target_lengths) <= 14 and target_lengths.max() <= target.shape[1]
    assert (target[:, 0] == Vocabulary.SOS).all()
    assert (source[np.arange(500), source_lengths - 1] == Vocabulary.EOS).all()
    assert (target[np.arange(500), target_lengths - 1] == Vocabulary.EOS).all()
    words = source[(source > 0) & (source != Vocabulary.EOS)]
    assert words.min() >= len(Vocabulary.SPECIALS) and words.max() < 100
    counts = np.bincount(words)
    assert counts.argmax() == len(Vocabulary.SPECIALS) and counts[4] > 5 * counts[40:].mean()  # Zipf


@pytest.mark.slow  # traces two decoders: ~23 s loaded
def test_prefix_baseline_decodes_the_cached_decoders_tokens(copy_model):
    model, source = copy_model
    length = model.max_target_length
    cached = cached_greedy_decoder(model, length)(source).numpy()
    stops = {row.tolist().index(Vocabulary.EOS) for row in cached if Vocabulary.EOS in row}
    assert len(stops) > 1, "sentences of several lengths, so the early stop and the padding after EOS count"
    np.testing.assert_array_equal(greedy_decoder(model, length)(source).numpy(), cached)


@pytest.mark.slow  # traces two decoders: ~17 s loaded
def test_prefix_baseline_runs_the_full_length_when_eos_is_unreachable():
    size = dataclasses.replace(QUICK_SIZE, vocab=30)
    model = peers.ours(size, max_target_length=12)
    bias = model.projection.bias
    bias.assign(tf.tensor_scatter_nd_update(bias, [[Vocabulary.EOS]], [-1e4]))
    source = tf.constant(np.random.default_rng(0).integers(4, 30, (5, 8)), tf.int32)
    prefix = greedy_decoder(model, 12)(source).numpy()
    assert prefix.shape == (5, 12)
    np.testing.assert_array_equal(prefix, cached_greedy_decoder(model, 12)(source).numpy())


@ahead_fixture
def quick_report(_folder) -> dict:
    """One quick run with a float32 and a bfloat16 block (bf16 is slow on a CPU without bf16
    instructions, but the tiny size keeps it seconds); started ahead (tests/ahead.py), beside other tests:
    what is checked of it are relations within the run (rates, shares, MFU at most 1), not speeds."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tx_keras.cli.bench",
            "--quick",
            "--json",
            "--precisions=float32,mixed_bfloat16",
            "--onednn=off",
            "--every-position",
            "--row-parts",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.mark.slow  # reads tx-bench --quick: 2-4 min of both cores
def test_quick_bench_blocks_run_every_model_at_the_blocks_settings(quick_report):
    blocks = quick_report["blocks"]
    libraries = quick_report["library_peaks"]
    # each kernel library measured in its own process, in the state asked for, whatever this run's
    assert {name: peaks["onednn"] for name, peaks in libraries.items()} == {"onednn": True, "eigen": False}
    assert quick_report["machine"]["xla"] is False
    assert [block["precision"] for block in blocks] == ["float32", "mixed_bfloat16"]
    assert {block["matmul_dtype"] for block in blocks} == {"float32", "bfloat16"}
    for block in blocks:
        rows = block["rows"]
        assert {"ours", "ours_every_position", "keras_mha"} <= set(rows)
        peers_raced = {name for name in rows if not name.startswith("ours")}
        # ours against every other row; ours at every position against each peer
        assert set(block["ratios"]) == {f"ours/{name}" for name in set(rows) - {"ours"}} | {
            f"ours_every_position/{peer}" for peer in peers_raced
        }
        # read from each built model, not copied from the request: a peer left at float32 would show
        assert {row["precision"] for row in rows.values()} == {block["precision"]}
        assert {row["jit_compile"] for row in rows.values()} == {block["jit_compile"]}
        assert len({row["parameters"] for row in rows.values()}) == 1
        assert block["peak_flops_per_s"] == quick_report["peak_flops_per_s"][block["matmul_dtype"]]
        # the step's own products run alone count towards the ceiling: MFU cannot flatter
        assert 0 < block["matmul_only_flops_per_s"] <= block["peak_flops_per_s"]
        assert block["matmul_only_flops_per_s"] == pytest.approx(
            training_flops(QUICK_SIZE) / block["matmul_only_s"]
        )
        assert 0 < block["padding_share"] < 1
        # MFU: real tokens' FLOPs over the best peak of any kernel library, which no library beats
        best = block["best_peak_flops_per_s"]
        assert best >= block["peak_flops_per_s"]
        assert all(best >= peaks["peaks"][block["matmul_dtype"]] for peaks in libraries.values())
        windows = block["windows"]
        assert windows["windows"] >= quick_report["timing"]["windows"] and windows["windows"] % 2 == 0
        assert windows["reason"] in {"narrow", "time cap"} and windows["primary"] in {"cpu", "wall"}
        for row in rows.values():
            assert 0 < row["mfu"] < row["mfu_positions_own_peak"] <= 1
            assert row["mfu"] == pytest.approx(row["real_flops_per_s"] / best)
            assert row["mfu_positions_own_peak"] == pytest.approx(
                row["flops_per_s"] / block["peak_flops_per_s"]
            )
            # the padded batch does fewer useful FLOPs than its positions
            assert row["real_flops_per_s"] / row["flops_per_s"] == pytest.approx(
                block["real_training_flops"] / training_flops(QUICK_SIZE)
            )
            assert block["real_training_flops"] < training_flops(QUICK_SIZE)
            # real tokens exclude the padding share of the positions
            assert row["tokens_per_s"] == pytest.approx(row["positions_per_s"] * (1 - block["padding_share"]))
            assert len(row["window_tokens_per_s"]) == len(row["window_cpu_step_s"]) == windows["windows"]
            assert row["cpu_step_s"] > 0
            assert row["matmul_share"] == pytest.approx(block["matmul_only_s"] / row["step_s"])
        for name, ratio in block["ratios"].items():
            mine, peer = name.split("/")
            # each ratio is the ratio of its rows (geometric means of the windows), inside its interval
            assert ratio["wall"]["ratio"] == pytest.approx(
                rows[mine]["tokens_per_s"] / rows[peer]["tokens_per_s"]
            )
            assert ratio["cpu"]["ratio"] == pytest.approx(rows[peer]["cpu_step_s"] / rows[mine]["cpu_step_s"])
            for measure in ("wall", "cpu"):
                assert ratio[measure]["low"] <= ratio[measure]["ratio"] <= ratio[measure]["high"]


@pytest.mark.slow  # reads tx-bench --quick
def test_markdown_ratios_are_the_rows_ratios(quick_report):
    """The docs renderer's ratios are the JSON rows' ratios, and its intervals the JSON's."""
    table = markdown([quick_report])
    note = next(line for line in table.splitlines() if line.startswith("1. "))
    for block in quick_report["blocks"]:
        rows = block["rows"]
        for name, ratio in block["ratios"].items():
            mine, peer = name.split("/")
            cells = []
            for measure in ("cpu", "wall"):
                interval = ratio[measure]
                assert row_ratios(rows, peer, mine)[measure] == pytest.approx(interval["ratio"])
                cells.append(f"{interval['ratio']:.2f}x ({interval['low']:.2f}-{interval['high']:.2f})")
            if mine == "ours":  # in the compared row's line
                line = next(
                    line
                    for line in table.splitlines()
                    if f"| {block['precision']} |" in line and f"| {NAMES[peer]} |" in line
                )
                assert all(f"| {cell} |" in line for cell in cells)
            else:  # ours at every position against a peer: in the run's note, per precision
                assert f"{NAMES[peer]} {cells[0]} / {cells[1]}" in note


@pytest.mark.slow  # reads tx-bench --quick
def test_table_names_the_onednn_state_and_each_blocks_matmul_share(quick_report):
    table = render(quick_report)
    assert (
        "oneDNN kernels: off (TF_ENABLE_ONEDNN_OPTS=0; tx-bench --onednn on|off compares); XLA: off" in table
    )
    primary = quick_report["blocks"][0]["windows"]["primary"]
    interval = quick_report["blocks"][0]["ratios"]["ours/keras_mha"][primary]
    assert (
        f"ratio ours/keras_mha: by {'CPU' if primary == 'cpu' else 'wall'} time {interval['ratio']:.2f}x "
        f"(95 % {interval['low']:.2f}-{interval['high']:.2f}); by " in table
    )
    assert table.count("matmuls: the step's products alone") == len(quick_report["blocks"])
    ours = [line for line in table.splitlines() if line.startswith("  ours (tx_keras Transformer)")]
    share = quick_report["blocks"][0]["rows"]["ours"]["matmul_share"]
    assert ours[0].endswith(f"{100 * share:.0f}%")


@pytest.mark.slow  # reads tx-bench --quick
def test_quick_bench_real_path_row(quick_report):
    row = quick_report["real_path"]
    assert row["preset"] == "tatoeba_small" and row["batching"] == "bucket" and row["steps"] > 1
    assert row["pairs"] == QUICK_REAL_PATH.pairs and row["batch_tokens"] == QUICK_REAL_PATH.batch_tokens
    # the timed epoch trains every pair once: its real tokens, counted here from the corpus itself, are
    # the source words plus the target tokens after SOS (the labels), whatever the batching
    source, target = generated_corpus(QUICK_REAL_PATH.pairs, QUICK_REAL_PATH.vocab, seed=0)
    real = np.count_nonzero(source) + np.count_nonzero(target[:, 1:])
    assert row["tokens_per_s"] * row["epoch_s"] == pytest.approx(real)
    positions = row["positions_per_s"] * row["epoch_s"]
    # every batch pads to a bucket width at most ~25 % above its rows (and 4 at the least)
    assert real < positions <= 1.25 * source.size + 1.25 * target[:, 1:].size
    assert row["steps_per_minute"] * row["epoch_s"] == pytest.approx(60 * row["steps"])
    assert 0 < row["padding_share"] < 0.5  # bucketing keeps a batch close to its longest pair
    assert 0 <= row["kernel_share"] < 1
    # cores kept busy over the timed epoch: positive, no more than the process may run on
    assert row["cores"] == len(os.sched_getaffinity(0)) and 0 < row["cpu_per_wall"] <= row["cores"] * 1.05
    cpu_s = row["cpu_ms_per_step"] * row["steps"] / 1000
    assert row["cpu_per_wall"] == pytest.approx(cpu_s / row["epoch_s"])
    (line,) = [line for line in render(quick_report).splitlines() if line.startswith("  CPU: ")]
    busy = f"{row['cpu_per_wall']:.2f} of {row['cores']} cores busy (CPU s per wall s)"
    assert line.startswith(f"  CPU: {busy}")
    # the steps alone: inside the epoch, which also starts an iterator and writes a checkpoint at its end
    assert 0 < row["steps_s"] < row["epoch_s"] and 0 < row["steps_cpu_per_wall"] <= row["cores"] * 1.05
    outside = f"(iterator, checkpoint, scalars) {row['epoch_s'] - row['steps_s']:.1f} s"
    steps = f"the steps alone {row['steps_cpu_per_wall']:.2f} over {row['steps_s']:.1f} s"
    assert line.endswith(f"{steps}, the epoch's start and end {outside}")
    # the checkpoint, taken at the timed epoch's end: its write timed after it, the file's size reported
    assert row["checkpoint_mb"] > 0 and 0 < row["checkpoint_write_s"] < row["epoch_s"]
    (written,) = [line for line in render(quick_report).splitlines() if line.startswith("  checkpoint: ")]
    assert f"in {row['checkpoint_write_s']:.2f} s ({row['checkpoint_write_cpu_s']:.2f} CPU s)" in written


@pytest.mark.slow  # reads tx-bench --quick
def test_quick_bench_real_path_races_itself_at_every_position(quick_report):
    """--every-position on the real path: ours' rows and every-position rows alternated A B B A, each
    pair's ratio from its rows, the printed figures the JSON's."""
    gather = quick_report["real_path_gather"]
    assert gather["order"] == ["ours", "every_position", "every_position", "ours"]
    ours, every = gather["ours_steps_per_minute"], gather["every_position_steps_per_minute"]
    assert ours[0] == quick_report["real_path"]["steps_per_minute"]  # the row the report shows is ours' first
    assert gather["pair_ratios"] == pytest.approx([ours[0] / every[0], ours[1] / every[1]])
    cpu_ours, cpu_every = gather["ours_cpu_ms_per_step"], gather["every_position_cpu_ms_per_step"]
    assert gather["cpu_pair_ratios"] == pytest.approx(
        [cpu_every[0] / cpu_ours[0], cpu_every[1] / cpu_ours[1]]
    )
    assert gather["ratio"] == pytest.approx(np.sqrt(np.prod(gather["pair_ratios"])))
    assert gather["padding_share"] == quick_report["real_path"]["padding_share"] > 0
    assert all(
        0 < cores <= quick_report["real_path"]["cores"] * 1.05
        for cores in gather["every_position_cpu_per_wall"]
    )
    (line,) = [line for line in render(quick_report).splitlines() if "the gather of real positions" in line]
    assert (
        f"worth {gather['ratio']:.2f}x by wall time" in line and f"{gather['cpu_ratio']:.2f}x by CPU" in line
    )


@pytest.mark.slow  # reads tx-bench --quick
def test_quick_bench_real_path_races_itself_on_default_thread_pools(quick_report):
    """--row-parts: ours' rows (tx-train's pools: on 2 cores one intra-op thread, the step in two row
    parts) against rows on TensorFlow's default pools, each in a fresh process, alternated A B B A."""
    parts, row = quick_report["real_path_parts"], quick_report["real_path"]
    assert parts["order"] == ["ours", "default_pools", "default_pools", "ours"]
    two_cores = len(os.sched_getaffinity(0)) == 2
    assert parts["step_parts"] == row["step_parts"] == (2 if two_cores else 1)
    assert (row["intra_op_threads"], row["inter_op_threads"]) == (
        (1, 2) if two_cores else (row["cores"],) * 2
    )
    ours, whole = parts["ours_steps_per_minute"], parts["default_pools_steps_per_minute"]
    assert parts["pair_ratios"] == pytest.approx([ours[0] / whole[0], ours[1] / whole[1]])
    cpu_ours, cpu_whole = parts["ours_cpu_ms_per_step"], parts["default_pools_cpu_ms_per_step"]
    assert parts["cpu_pair_ratios"] == pytest.approx([cpu_whole[0] / cpu_ours[0], cpu_whole[1] / cpu_ours[1]])
    assert parts["ratio"] == pytest.approx(np.sqrt(np.prod(parts["pair_ratios"])))
    report = render(quick_report).splitlines()
    (line,) = [line for line in report if f"the step in {parts['step_parts']} row parts is worth" in line]
    assert f"worth {parts['ratio']:.2f}x by wall time" in line and f"{parts['cpu_ratio']:.2f}x by CPU" in line
    pools = f"on {row['intra_op_threads']} intra-op and {row['inter_op_threads']} inter-op threads"
    assert row["planned_pools"] and f"{pools} (as tx-train sets them)" in "\n".join(report)


@pytest.mark.slow  # two real-path trainings: ~75 s loaded
def test_the_real_path_at_every_position_trains_the_every_position_model(monkeypatch):
    """The every-position row builds `EveryPosition` (no gather), ours' row the shipped Transformer; both
    train the same preset's trainer on the same batches."""
    from tx_keras.benchmark import real_path
    from tx_keras.benchmark.peers import EveryPosition

    built = []
    fit = keras.Model.fit
    monkeypatch.setattr(
        keras.Model, "fit", lambda self, *a, **k: built.append(type(self)) or fit(self, *a, **k)
    )
    rows = [real_path.real_path_row(QUICK_REAL_PATH, every_position=every) for every in (False, True)]
    assert built == [real_path.Transformer, EveryPosition]
    assert [row["every_position"] for row in rows] == [False, True]
    assert rows[0]["parameters"] == rows[1]["parameters"] and rows[0]["steps"] == rows[1]["steps"]
    assert rows[0]["padding_share"] == rows[1]["padding_share"]


def test_decoding_rates_are_tokens_over_the_median_call():
    """Three turns of each decoder taking the wall and CPU seconds below: rates and ratios worked out by
    hand."""
    wall = {"prefix_4": [0.30, 0.20, 0.25], "cached_4": [0.05, 0.10, 0.04], "saved_model_4": [0.5, 0.4, 0.3]}
    cpu = {"prefix_4": [0.30, 0.20, 0.20], "cached_4": [0.04, 0.05, 0.05], "saved_model_4": [1.0, 1.0, 1.0]}
    results = decoding_turns.decoding_rates(wall, cpu, batch=8)
    assert list(results) == ["4", "saved_model_4"]
    rates, tokens = results["4"], 8 * 4  # 8 sentences x 4 output tokens
    assert rates["prefix"] == pytest.approx(tokens / 0.25)  # 128 tokens/s
    assert rates["cached"] == pytest.approx(tokens / 0.05)  # 640 tokens/s
    assert rates["speedup"] == pytest.approx(6.0)  # median of the paired ratios 6, 2, 6.25
    assert rates["cpu_speedup"] == pytest.approx(4.0)  # median of the paired CPU ratios 7.5, 4, 4
    # the interval: geometric mean of the paired ratios, (6 x 2 x 6.25)^(1/3) = 4.217, and Student's t
    # (2 degrees of freedom) on their logs; three turns this far apart leave it wide
    interval = rates["interval"]
    assert interval["ratio"] == pytest.approx((6 * 2 * 6.25) ** (1 / 3))
    assert (interval["low"], interval["high"]) == pytest.approx((0.8466, 21.008), rel=1e-3)
    assert rates["cpu_interval"]["ratio"] == pytest.approx((7.5 * 4 * 4) ** (1 / 3))
    assert decoding_interval(rates) == "; per turn 4.2x (95 % 0.8-21.0), CPU 4.9x (" + (
        f"{rates['cpu_interval']['low']:.1f}-{rates['cpu_interval']['high']:.1f})"
    )
    assert results["saved_model_4"] == pytest.approx(tokens / 0.4)
    one_turn = decoding_turns.decoding_rates({k: v[:1] for k, v in wall.items()}, cpu, batch=8)
    assert "interval" not in one_turn["4"] and one_turn["4"]["speedup"] == pytest.approx(6.0)


class _FakeWorker:
    """A decoding process whose calls take the seconds given per key, recording the order it was asked."""

    def __init__(self, name: str, seconds: dict[str, list[float]], asked: list[str]):
        self.name, self.seconds, self.asked = name, seconds, asked
        self.calls = list(seconds)

    def time(self, key: str) -> tuple[float, float]:
        self.asked.append(f"{self.name}:{key}")
        seconds = self.seconds[key].pop(0)
        return seconds, seconds / 2


def test_two_decoding_processes_are_timed_in_turns_and_their_gain_paired_by_turn():
    """Each turn times every key in both processes, keys and processes reversed every other turn, so a
    load change hits both; the planned pools' gain is the geometric mean of the per-turn ratios."""
    asked: list[str] = []
    planned = _FakeWorker("planned", {"prefix_4": [1.0, 1.0, 1.0], "cached_4": [0.1, 0.2, 0.1]}, asked)
    default = _FakeWorker("default", {"prefix_4": [1.0, 1.0, 1.0], "cached_4": [0.2, 0.2, 0.3]}, asked)
    wall, cpu = decoding_turns.timed_turns({"planned": planned, "default": default}, turns=3)
    assert asked[:8] == [
        "planned:prefix_4", "default:prefix_4", "planned:cached_4", "default:cached_4",
        "default:cached_4", "planned:cached_4", "default:prefix_4", "planned:prefix_4",
    ]  # fmt: skip
    assert wall["default"]["cached_4"] == [0.2, 0.2, 0.3] and cpu["planned"]["cached_4"] == [0.05, 0.1, 0.05]
    gain = decoding_turns.pools_gain(wall["planned"], wall["default"])
    assert gain["prefix_4"]["ratio"] == pytest.approx(1.0) and gain["prefix_4"]["half_width"] == 0.0
    assert gain["cached_4"]["ratio"] == pytest.approx((2 * 1 * 3) ** (1 / 3))  # per turn 2x, 1x, 3x
    assert gain["cached_4"]["low"] < 1 < gain["cached_4"]["high"]  # three turns this far apart: wide
    text = pools_gain_text(gain)
    assert text.startswith("4 tokens prefix 1.00x (95 % 1.00-1.00); 4 tokens cached 1.82x (95 % ")
    one = decoding_turns.pools_gain({"cached_4": [0.1]}, {"cached_4": [0.25]})
    assert one == {"cached_4": {"ratio": pytest.approx(2.5)}}  # one turn: no interval
    assert pools_gain_text(one) == "4 tokens cached 2.50x"


def test_matmul_peak_counts_two_flops_per_multiply_add(monkeypatch):
    """With every timed call taking one (fake) second, the peak is the FLOPs of the faster graph: two
    chains of four 4x4 @ 4x4 products, each 4 x 4 outputs of 4 multiply-adds: 8 x 2 x 64 = 1024."""
    ticks = itertools.count()  # perf_counter: 0, 1, 2, ... so each timed call lasts one second
    monkeypatch.setattr(matmul_peak, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    assert matmul_peak.matmul_peak("float32", n=4, repeats=2) == 1024.0
    assert next(ticks) == 2 * 2 * 2  # two graphs, two repeats, start and end


@pytest.mark.slow  # reads tx-bench --quick
def test_quick_bench_decoding(quick_report):
    for outputs in ("4", "8"):
        rates = quick_report["decoding"][outputs]
        # one timed call each in a quick run: what they are made of is checked on a fake clock above
        assert min(rates[key] for key in ("cached", "prefix", "speedup", "cpu_speedup")) > 0
    assert quick_report["decoding"]["saved_model_8"] > 0
    # timed in a fresh process that tx-bench started with its own settings (--onednn=off here)
    process = quick_report["decoding_process"]
    assert process["pid"] != process["parent_pid"] and process["onednn"] is False
    assert process["allocator"] == quick_report["real_path"]["allocator"]  # what tx-bench's process set up
    assert quick_report["machine"]["cores"] >= 1 and quick_report["machine"]["date"].endswith("UTC")
    # --onednn sets TensorFlow's switch before it starts, and the run reads the state back from TensorFlow
    assert quick_report["machine"]["onednn"] is False and quick_report["machine"]["onednn_env"] == "0"


@pytest.mark.slow  # reads tx-bench --quick
def test_quick_bench_decodes_on_tx_translates_pools_beside_the_defaults(quick_report):
    """The decoding worker starts as tx-translate (decoding/row_parts.py's plan: 1 intra-op thread on 2
    cores, CI's machine); where that changed the pools, a second worker decodes on TensorFlow's."""
    process = quick_report["decoding_process"]
    assert process["planned_pools"] is True and process["thread_pools"].startswith("thread pools: ")
    report = render(quick_report).splitlines()
    assert any(line.endswith(process["thread_pools"]) for line in report if "fresh process (pid" in line)
    if process["intra_op_threads"] != 1:
        assert "decoding_default_pools" not in quick_report
        return
    assert process["inter_op_threads"] == 2 and process["thread_pools"].endswith("(decoding in 2 row parts)")
    default = quick_report["decoding_default_pools"]
    assert default.keys() == quick_report["decoding"].keys()
    assert min(default["8"][key] for key in ("cached", "prefix", "speedup")) > 0
    other = quick_report["decoding_default_process"]  # a second fresh process, on TensorFlow's pools
    assert other["planned_pools"] is False and other["pid"] not in (process["pid"], process["parent_pid"])
    # the two processes lived side by side, timed in turns: the gain has an interval over the 2 turns
    gains = quick_report["decoding_pools"]
    assert list(gains) == ["prefix_4", "cached_4", "prefix_8", "cached_8", "saved_model_8"]
    assert all(gain["low"] <= gain["ratio"] <= gain["high"] for gain in gains.values())
    (line,) = [line for line in report if line.startswith("  the planned pools against the defaults, ")]
    assert f"8 tokens cached {gains['cached_8']['ratio']:.2f}x (95 % " in line
    assert "SavedModel 8 tokens " in line
    table = markdown([quick_report]).splitlines()  # the docs' table: one row per process and length
    for key, where in (("decoding", "tx-translate's pools"), ("decoding_default_pools", "default pools")):
        (row,) = [
            line
            for line in table
            if line.startswith("| 1 | 8 output tokens, own process, ") and where in line
        ]
        assert f"| {quick_report[key]['8']['cached']:,.0f} |" in row
    (paired,) = [line for line in table if line.startswith("Run 1: tx-translate's pools against ")]
    assert paired.endswith(f": {pools_gain_text(gains)}.")


@pytest.mark.slow  # starts a worker process: ~25 s loaded
def test_a_decoding_worker_that_fails_is_one_line_error(monkeypatch):
    monkeypatch.setattr(decoding_process, "CALLS", "tx_keras.no_such_worker:serve")
    failed = r"^the decoding process ended with code 1: .*No module named 'tx_keras.no_such_worker'$"
    with pytest.raises(WorkerFailed, match=failed):
        decoding_process.decoding_in_own_process(BenchSettings(QUICK_SIZE, Timing(outputs=(4,))))


@pytest.mark.slow  # starts a worker process: ~31 s loaded
def test_a_peak_worker_that_fails_is_the_same_one_line_error(monkeypatch):
    """tx-bench catches WorkerFailed; a kernel library's peak process that ends raises that, not a type of
    its own that would end tx-bench in a traceback."""
    monkeypatch.setattr(library_peaks, "PEAKS", "tx_keras.no_such_worker:serve")
    with pytest.raises(WorkerFailed, match=r"^the onednn matmul peak process ended with code 1: .*No module"):
        library_peaks.library_peaks(["float32"], 64)


def test_every_worker_function_named_in_a_launch_exists():
    """Workers are started by a `module:function` string (worker_process.py): each names a function."""
    import importlib

    from tx_keras.benchmark import backend_race, real_path

    for target in (decoding_process.CALLS, library_peaks.PEAKS, backend_race.ROWS, real_path.ROW):
        module, _, name = target.partition(":")
        assert callable(getattr(importlib.import_module(module), name)), target


@pytest.mark.parametrize("backend", ["jax", "tensorflow,jax"])
def test_every_position_on_jax_is_one_line_error(backend, capsys):
    """Ours on JAX computes every position already: the extra row would race ours against itself."""
    with pytest.raises(SystemExit) as stopped:
        main(["--every-position", "--backend", backend])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "tx-bench: error: --every-position runs on TensorFlow alone: on JAX ours computes every position "
        "already"
    )


def test_bad_size_is_one_line_error():
    result = subprocess.run(
        [sys.executable, "-m", "tx_keras.cli.bench", "--d-model", "30", "--num-heads", "4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "tx-bench: error: --num-heads 4 must divide --d-model 30"
