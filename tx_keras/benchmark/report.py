"""`tx-bench`'s results as the readable side-by-side table a person compares at a glance."""

from __future__ import annotations

from tx_keras.benchmark.machine import ONEDNN_STATES

NAMES = {
    "ours": "ours (tx_keras Transformer)",
    "ours_every_position": "ours, every position (no gather)",
    "keras_mha": "keras.layers.MultiHeadAttention",
    "keras_hub": "KerasHub Transformer{En,De}coder",
}


def _xla(machine: dict) -> str:
    return {True: "on", False: "off"}.get(machine.get("xla"), "unknown")


def _stop(windows: dict, timing: dict) -> str:
    """How many windows a block took and why it stopped, and which measure its ratios are read by."""
    why = (
        f"every ratio's 95 % interval within +-{100 * timing['target_half_width']:.1f} %"
        if windows["reason"] == "narrow"
        else f"time cap of {timing['time_cap_s']:.0f} s reached"
    )
    others = windows["others_cores"]
    busy = "unknown" if others is None else f"{others:.2f} cores"
    measure = {"cpu": "CPU time", "wall": "wall time"}[windows["primary"]]
    return (
        f"{windows['windows']} interleaved windows of {timing['steps']} steps in {windows['seconds']:.0f} s "
        f"({why}); others kept {busy} busy, so {measure} is the primary figure"
    )


def ratio_text(ratio: dict, primary: str) -> str:
    """`by CPU time 1.20x (95 % 1.15-1.25); by wall time ...`, the primary measure first."""
    order = ["cpu", "wall"] if primary == "cpu" else ["wall", "cpu"]
    return "; ".join(
        f"by {measure if measure == 'wall' else 'CPU'} time {ratio[measure]['ratio']:.2f}x "
        f"(95 % {ratio[measure]['low']:.2f}-{ratio[measure]['high']:.2f})"
        for measure in order
    )


def _onednn(machine: dict) -> str:
    state = ONEDNN_STATES[machine["onednn"]]
    set_by = machine["onednn_env"]
    how = f"TF_ENABLE_ONEDNN_OPTS={set_by}" if set_by is not None else "TensorFlow's default for this CPU"
    return f"{state} ({how}; tx-bench --onednn on|off compares)"


def _header(results: dict) -> list[str]:
    machine, size = results["machine"], results["size"]
    return [
        f"tx-bench on {machine['cpu']} ({machine['cores']} cores; {', '.join(machine['instructions']) or '-'}"
        f"{'; GPU ' + ', '.join(machine['gpus']) if machine['gpus'] else ''}), {machine['date']}, "
        f"load {machine['load_average'][0]:.2f} at start, {machine['load_average_end'][0]:.2f} at end",
        f"Keras backend: {results['backend']}"
        + (f"; oneDNN kernels: {_onednn(machine)}" if results["backend"] == "tensorflow" else "")
        + f"; XLA: {_xla(machine)}",
        "size: " + ", ".join(f"{key} {value}" for key, value in size.items()),
        "parameters: "
        + ", ".join(f"{name} {count:,}" for name, count in results["parameters"].items())
        + " (parity within 2 % checked)",
        *(f"left out: {NAMES[name]}: {why}" for name, why in results["left_out"].items()),
        "matmul peak in this process: "
        + ", ".join(
            f"{dtype} {flops / 1e9:.1f} GFLOP/s" for dtype, flops in results["peak_flops_per_s"].items()
        ),
        *(
            f"matmul peak with {library} kernels (own process, oneDNN "
            f"{ONEDNN_STATES[result['onednn']]}): "
            + ", ".join(f"{dtype} {flops / 1e9:.1f} GFLOP/s" for dtype, flops in result["peaks"].items())
            for library, result in results["library_peaks"].items()
        ),
    ]


def _block(block: dict, timing: dict) -> list[str]:
    mfu = f"MFU({block['matmul_dtype']})"
    lines = [
        "",
        f"training, {block['precision']}, jit_compile={block['jit_compile']} (rows: geometric mean of "
        f"{_stop(block['windows'], timing)}; padding {100 * block['padding_share']:.1f} % of positions, "
        "not counted as tokens)",
        f"  {'':<34} {'tokens/s':>10} {'spread':>7} {'GFLOP/s':>8} {mfu:>14} {'all pos.':>9} "
        f"{'CPU ms/step':>12} {'matmuls':>8}",
    ]
    for name, row in block["rows"].items():
        lines.append(
            f"  {NAMES[name]:<34} {row['tokens_per_s']:>10,.0f} {100 * row['spread']:>6.1f}% "
            f"{row['real_flops_per_s'] / 1e9:>8.1f} {100 * row['mfu']:>13.1f}% "
            f"{100 * row['mfu_positions_own_peak']:>8.1f}% {1000 * row['cpu_step_s']:>12.0f} "
            f"{100 * row['matmul_share']:>7.0f}%"
        )
    lines += [
        f"  {mfu}: FLOPs on real tokens over the best {block['matmul_dtype']} matmul rate of any kernel "
        f"library ({block['best_peak_flops_per_s'] / 1e9:.1f} GFLOP/s); all pos.: FLOPs on every computed "
        f"position over this process's own peak ({block['peak_flops_per_s'] / 1e9:.1f} GFLOP/s), the "
        "figure tx-bench printed before",
        f"  matmuls: the step's products alone (same shapes, forward and both gradients, nothing else) "
        f"take {1000 * block['matmul_only_s']:.0f} ms "
        f"({block['matmul_only_flops_per_s'] / 1e9:.1f} GFLOP/s); "
        "the column is their share of each model's step",
    ]
    for name, ratio in block["ratios"].items():
        lines.append(f"  ratio {name}: {ratio_text(ratio, block['windows']['primary'])}")
    return lines


def _real_path(row: dict) -> list[str]:
    model = row["model"]
    return [
        "",
        f"real path: fit over the {row['preset']} pipeline ({row['batching']} batches of <= "
        f"{row['batch_tokens']} tokens, TensorBoard + checkpoint callbacks), generated corpus of "
        f"{row['pairs']} pairs, d_model {model['d_model']}, {row['parameters']:,} parameters, "
        f"{row['precision']}, jit_compile={row['jit_compile']}",
        f"  {row['tokens_per_s']:,.0f} real tokens/s, {row['steps_per_minute']:,.0f} steps/minute "
        f"({row['steps']} steps in {row['epoch_s']:.1f} s, after a {row['first_epoch_s']:.1f} s warm-up "
        "epoch), "
        f"padding {100 * row['padding_share']:.1f} %, kernel {100 * row['kernel_share']:.1f} % of CPU time",
        f"  CPU: {row['cpu_per_wall']:.2f} of {row['cores']} cores busy (CPU s per wall s), "
        f"{row['cpu_ms_per_step']:.0f} CPU ms per step; the steps alone {row['steps_cpu_per_wall']:.2f} "
        f"over {row['steps_s']:.1f} s, the epoch's start and end (iterator, checkpoint, scalars) "
        f"{row['epoch_s'] - row['steps_s']:.1f} s",
        *_checkpoint_write(row),
        *_pools(row),
        f"  {row['allocator']}",
    ]


def _pools(row: dict) -> list[str]:
    """The thread pools the row trained on, and whether each step's rows were cut into parts."""
    cut = (
        f"each step's rows in {row['step_parts']} parts"
        if row["step_parts"] > 1
        else "the whole batch a step"
    )
    pools = "as tx-train sets them" if row["planned_pools"] else "TensorFlow's defaults"
    return [
        f"  {cut}, on {row['intra_op_threads']} intra-op and {row['inter_op_threads']} inter-op threads "
        f"({pools})"
    ]


def _rates(values: list[float]) -> str:
    return ", ".join(f"{value:,.0f}" for value in values)


def _real_path_parts(parts: dict) -> list[str]:
    """--row-parts: the real path against itself on TensorFlow's default pools, A B B A."""
    pairs = ", ".join(f"{ratio:.2f}x" for ratio in parts["pair_ratios"])
    cores = ", ".join(f"{value:.2f}" for value in parts["default_pools_cpu_per_wall"])
    ours_cores = ", ".join(f"{value:.2f}" for value in parts["ours_cpu_per_wall"])
    return [
        f"  on TensorFlow's default thread pools, the whole batch a step (rows alternated "
        f"{' '.join(parts['order'])}, each in a fresh process): "
        f"{_rates(parts['default_pools_steps_per_minute'])} steps/minute at {cores} cores busy, against "
        f"ours' {_rates(parts['ours_steps_per_minute'])} at {ours_cores}",
        f"  the step in {parts['step_parts']} row parts is worth {parts['ratio']:.2f}x by wall time "
        f"(pairs {pairs}), {parts['cpu_ratio']:.2f}x by CPU time",
    ]


def _real_path_gather(gather: dict) -> list[str]:
    """--every-position on the real path: ours against itself computing every position, A B B A."""

    pairs = ", ".join(f"{ratio:.2f}x" for ratio in gather["pair_ratios"])
    return [
        f"  at every position (ours without the gather, the peers' work; rows alternated "
        f"{' '.join(gather['order'])}): {_rates(gather['every_position_steps_per_minute'])} steps/minute "
        f"against ours' {_rates(gather['ours_steps_per_minute'])}",
        f"  the gather of real positions is worth {gather['ratio']:.2f}x by wall time (pairs {pairs}), "
        f"{gather['cpu_ratio']:.2f}x by CPU time, at {100 * gather['padding_share']:.1f} % padding",
    ]


def _checkpoint_write(row: dict) -> list[str]:
    """The checkpoint's background write, timed after the epoch (a run overlaps it with the next one)."""
    return [
        f"  checkpoint: {row['checkpoint_mb']:.0f} MB, written in the background in "
        f"{row['checkpoint_write_s']:.2f} s ({row['checkpoint_write_cpu_s']:.2f} CPU s) after the timed "
        "epoch; a run overlaps it with the next epoch's first steps"
    ]


def decoding_interval(rates: dict) -> str:
    """The cached-vs-prefix ratio over the turns with its 95 % intervals, wall and CPU ("" for a run of one
    turn: no interval)."""
    if "interval" not in rates:
        return ""
    wall, cpu = rates["interval"], rates["cpu_interval"]
    return (
        f"; per turn {wall['ratio']:.1f}x (95 % {wall['low']:.1f}-{wall['high']:.1f}), "
        f"CPU {cpu['ratio']:.1f}x ({cpu['low']:.1f}-{cpu['high']:.1f})"
    )


def render(results: dict) -> str:
    """Machine, size, parity, peaks, one block per precision, the real path, decoding speed."""
    lines = _header(results)
    for block in results["blocks"]:
        lines += _block(block, results["timing"])
    if "real_path" in results:
        lines += _real_path(results["real_path"])
    if "real_path_gather" in results:
        lines += _real_path_gather(results["real_path_gather"])
    if "real_path_parts" in results:
        lines += _real_path_parts(results["real_path_parts"])
    lines += [f"left out on {results['backend']}: {why}" for why in results.get("left_out_parts", [])]
    if "decoding" not in results:
        return "\n".join(lines)
    batch = results["size"]["batch"]
    process = results["decoding_process"]
    lines += [
        "",
        f"greedy decoding in a fresh process (pid {process['pid']}); {process['allocator']}; "
        f"{process['thread_pools']}",
    ]
    lines += ["", f"greedy decoding, float32 (batch {batch})  {'prefix':>8} {'cached':>10} {'speedup':>8}"]
    lines += _decoding_rows(results["decoding"])
    if default := results.get("decoding_default_pools"):
        lines += ["  on TensorFlow's default thread pools (another fresh process beside it, timed in turns):"]
        lines += _decoding_rows(default)
        lines.append(
            "  the planned pools against the defaults, tokens/s per turn: "
            + pools_gain_text(results["decoding_pools"])
        )
    return "\n".join(lines)


def _decoding_rows(decoding: dict) -> list[str]:
    lines = []
    for key, rates in decoding.items():
        if isinstance(rates, dict):
            lines.append(
                f"  {key + ' output tokens':<32} {rates['prefix']:>10,.0f} {rates['cached']:>10,.0f} "
                f"{rates['speedup']:>7.1f}x   tokens/s{decoding_interval(rates)}"
            )
        else:
            outputs = key.rsplit("_", 1)[1]
            lines.append(
                f"  SavedModel translate, {outputs} tokens {'':>10} {rates:>10,.0f}           tokens/s"
            )
    return lines


def pools_gain_text(gains: dict[str, dict[str, float]]) -> str:
    """How many times faster each call ran on the planned pools than on the defaults, with its 95 %
    interval where there were two turns or more (decoding_turns.pools_gain)."""
    parts = []
    for key, gain in gains.items():
        name, count = key.rsplit("_", 1)
        what = f"SavedModel {count} tokens" if name == "saved_model" else f"{count} tokens {name}"
        interval = f" (95 % {gain['low']:.2f}-{gain['high']:.2f})" if "low" in gain else ""
        parts.append(f"{what} {gain['ratio']:.2f}x{interval}")
    return "; ".join(parts)


def _race_block(block: dict, timing: dict) -> list[str]:
    mfu = f"MFU({block['matmul_dtype']})"
    reference = block["reference"]
    peaks = ", ".join(f"{backend} {flops / 1e9:.1f}" for backend, flops in block["peaks_by_backend"].items())
    lines = [
        "",
        f"training, {block['precision']} (rows: geometric mean of {_stop(block['windows'], timing)}, "
        "interleaved across the backends' processes; padding "
        f"{100 * block['padding_share']:.1f} % of positions, not counted as tokens)",
        f"  {'':<34} {'backend':<11} {'XLA':<4} {'tokens/s':>10} {'spread':>7} {'GFLOP/s':>8} {mfu:>14} "
        f"{'CPU ms/step':>12} {'matmuls':>8} {'speed':>7}",
    ]
    for row in sorted(block["rows"], key=lambda row: list(NAMES).index(row["model"])):
        speed = row["speed_vs_reference"][block["windows"]["primary"]]
        lines.append(
            f"  {NAMES[row['model']]:<34} {row['backend']:<11} {'on' if row['jit_compile'] else 'off':<4} "
            f"{row['tokens_per_s']:>10,.0f} {100 * row['spread']:>6.1f}% {row['flops_per_s'] / 1e9:>8.1f} "
            f"{100 * row['mfu']:>13.1f}% {1000 * row['cpu_step_s']:>12.0f} "
            f"{100 * row['matmul_share']:>7.0f}% {speed['ratio']:>6.2f}x "
            f"({speed['low']:.2f}-{speed['high']:.2f})"
        )
    lines += [
        f"  speed: times as fast as {NAMES[reference['model']]} on {reference['backend']} without XLA, "
        f"by {block['windows']['primary']} time, the geometric mean of ratios paired window by window "
        "(95 % interval)",
        f"  MFU: FLOPs on real tokens over the best {block['matmul_dtype']} matmul rate either backend "
        f"reached ({peaks} GFLOP/s); "
        "matmuls: the step's products alone, on the row's backend, as a share of its step",
    ]
    return lines


def render_backends(results: dict) -> str:
    """The backend column: each precision's rows on every backend, XLA on and off, in one table."""
    machine, size = results["machine"], results["size"]
    versions = "; ".join(
        ", ".join(f"{package} {version}" for package, version in info["versions"].items())
        for info in results["backends"].values()
    )
    lines = [
        f"tx-bench --backend {','.join(results['backends'])} on {machine['cpu']} ({machine['cores']} cores; "
        f"{', '.join(machine['instructions']) or '-'}"
        f"{'; GPU ' + ', '.join(machine['gpus']) if machine['gpus'] else ''}), {machine['date']}, "
        f"load {machine['load_average'][0]:.2f} at start, {machine['load_average_end'][0]:.2f} at end",
        f"versions: {versions}; one process per backend",
        "size: " + ", ".join(f"{key} {value}" for key, value in size.items()),
        "parameters: "
        + ", ".join(f"{name} {count:,}" for name, count in results["parameters"].items())
        + " (parity within 2 % checked on every backend)",
        *(f"left out: {NAMES[name]}: {why}" for name, why in results["left_out"].items()),
    ]
    for block in results["blocks"]:
        lines += _race_block(block, results["timing"])
    return "\n".join(lines)
