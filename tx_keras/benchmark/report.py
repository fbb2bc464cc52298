"""`tx-bench`'s results as the readable side-by-side table a person compares at a glance."""

from __future__ import annotations

from tx_keras.benchmark.machine import ONEDNN_STATES

NAMES = {
    "ours": "ours (tx_keras Transformer)",
    "keras_mha": "keras.layers.MultiHeadAttention",
    "keras_hub": "KerasHub Transformer{En,De}coder",
}


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
        + (f"; oneDNN kernels: {_onednn(machine)}" if results["backend"] == "tensorflow" else ""),
        "size: " + ", ".join(f"{key} {value}" for key, value in size.items()),
        "parameters: "
        + ", ".join(f"{name} {count:,}" for name, count in results["parameters"].items())
        + " (parity within 2 % checked)",
        *(f"left out: {NAMES[name]}: {why}" for name, why in results["left_out"].items()),
        "matmul peak: "
        + ", ".join(
            f"{dtype} {flops / 1e9:.1f} GFLOP/s" for dtype, flops in results["peak_flops_per_s"].items()
        ),
    ]


def _block(block: dict, timing: dict) -> list[str]:
    mfu = f"MFU({block['matmul_dtype']})"
    lines = [
        "",
        f"training, {block['precision']}, jit_compile={block['jit_compile']} (median of {timing['windows']} "
        f"interleaved windows of {timing['steps']} steps; padding {100 * block['padding_share']:.1f} % of "
        "positions, not counted as tokens)",
        f"  {'':<34} {'tokens/s':>10} {'spread':>7} {'GFLOP/s':>8} {mfu:>14} {'CPU ms/step':>12} "
        f"{'matmuls':>8}",
    ]
    for name, row in block["rows"].items():
        lines.append(
            f"  {NAMES[name]:<34} {row['tokens_per_s']:>10,.0f} {100 * row['spread']:>6.1f}% "
            f"{row['flops_per_s'] / 1e9:>8.1f} {100 * row['mfu']:>13.1f}% {1000 * row['cpu_step_s']:>12.0f} "
            f"{100 * row['matmul_share']:>7.0f}%"
        )
    lines.append(
        f"  matmuls: the step's products alone (same shapes, forward and both gradients, nothing else) "
        f"take {1000 * block['matmul_only_s']:.0f} ms "
        f"({block['matmul_only_flops_per_s'] / 1e9:.1f} GFLOP/s); "
        "the column is their share of each model's step"
    )
    for name, ratio in block["ratios"].items():
        lines.append(
            f"  ratio {name}: {ratio['median']:.2f}x (windows {ratio['min']:.2f}-{ratio['max']:.2f}; "
            f"by CPU time {ratio['cpu_median']:.2f}x)"
        )
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
        f"{row['cpu_ms_per_step']:.0f} CPU ms per step",
        f"  {row['allocator']}",
    ]


def render(results: dict) -> str:
    """Machine, size, parity, peaks, one block per precision, the real path, decoding speed."""
    lines = _header(results)
    for block in results["blocks"]:
        lines += _block(block, results["timing"])
    if "real_path" in results:
        lines += _real_path(results["real_path"])
    lines += [f"left out on {results['backend']}: {why}" for why in results.get("left_out_parts", [])]
    if "decoding" not in results:
        return "\n".join(lines)
    batch = results["size"]["batch"]
    lines += ["", f"greedy decoding, float32 (batch {batch})  {'prefix':>8} {'cached':>10} {'speedup':>8}"]
    for key, rates in results["decoding"].items():
        if isinstance(rates, dict):
            lines.append(
                f"  {key + ' output tokens':<32} {rates['prefix']:>10,.0f} {rates['cached']:>10,.0f} "
                f"{rates['speedup']:>7.1f}x   tokens/s"
            )
        else:
            outputs = key.rsplit("_", 1)[1]
            lines.append(
                f"  SavedModel translate, {outputs} tokens {'':>10} {rates:>10,.0f}           tokens/s"
            )
    return "\n".join(lines)


def _race_block(block: dict, timing: dict) -> list[str]:
    mfu = f"MFU({block['matmul_dtype']})"
    reference = block["reference"]
    peaks = ", ".join(f"{backend} {flops / 1e9:.1f}" for backend, flops in block["peaks_by_backend"].items())
    lines = [
        "",
        f"training, {block['precision']} (median of {timing['windows']} windows of {timing['steps']} steps, "
        "interleaved across the backends' processes; padding "
        f"{100 * block['padding_share']:.1f} % of positions, not counted as tokens)",
        f"  {'':<34} {'backend':<11} {'XLA':<4} {'tokens/s':>10} {'spread':>7} {'GFLOP/s':>8} {mfu:>14} "
        f"{'CPU ms/step':>12} {'matmuls':>8} {'speed':>7}",
    ]
    for row in sorted(block["rows"], key=lambda row: list(NAMES).index(row["model"])):
        speed = row["speed_vs_reference"]
        lines.append(
            f"  {NAMES[row['model']]:<34} {row['backend']:<11} {'on' if row['jit_compile'] else 'off':<4} "
            f"{row['tokens_per_s']:>10,.0f} {100 * row['spread']:>6.1f}% {row['flops_per_s'] / 1e9:>8.1f} "
            f"{100 * row['mfu']:>13.1f}% {1000 * row['cpu_step_s']:>12.0f} "
            f"{100 * row['matmul_share']:>7.0f}% {speed['median']:>6.2f}x"
        )
    lines += [
        f"  speed: times as fast as {NAMES[reference['model']]} on {reference['backend']} without XLA, "
        "the median of ratios paired window by window",
        f"  MFU: of the best {block['matmul_dtype']} matmul rate either backend reached ({peaks} GFLOP/s); "
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
