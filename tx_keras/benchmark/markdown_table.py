"""docs/performance.md's tables, rendered from one `tx-bench --json` file: the one source of its figures.

Every ratio is computed here from the rows it stands beside, the same way for every table: ours' tokens/s
over the row's (wall time) and the row's CPU ms per step over ours' (CPU time). tx-bench's rows are
geometric means of their windows, so these equal the paired-window ratios tx-bench printed; the 95 %
interval is recomputed from the windows the JSON keeps (ratio_interval.py). A file without windows (figures
copied from an older table) gets its ratios from its rows and no interval. Imports no Keras:
`tx-bench --markdown FILE.json` runs anywhere.
"""

from __future__ import annotations

from tx_keras.benchmark.machine import ONEDNN_STATES
from tx_keras.benchmark.ratio_interval import ratio_interval
from tx_keras.benchmark.report import NAMES

STATES = {True: "on", False: "off", None: "unknown"}


def row_ratios(rows: dict[str, dict], name: str) -> dict[str, float]:
    """How many times faster ours ran than row `name`, by wall and CPU time, from the two rows alone."""
    ours, theirs = rows["ours"], rows[name]
    return {
        "wall": ours["tokens_per_s"] / theirs["tokens_per_s"],
        "cpu": theirs["cpu_step_s"] / ours["cpu_step_s"],
    }


def _interval(rows: dict[str, dict], name: str, measure: str) -> str:
    key = {"wall": "window_step_s", "cpu": "window_cpu_step_s"}[measure]
    if key not in rows["ours"] or len(rows["ours"][key]) < 2:
        return ""
    interval = ratio_interval(rows["ours"][key], rows[name][key])
    return f" ({interval['low']:.2f}-{interval['high']:.2f})"


def _machine(results: dict) -> str:
    machine = results["machine"]
    onednn = ONEDNN_STATES[machine.get("onednn")]
    how = (
        f"TF_ENABLE_ONEDNN_OPTS={machine['onednn_env']}"
        if machine.get("onednn_env") is not None
        else "TensorFlow's default"
    )
    load = machine.get("load_average", [None])[0], machine.get("load_average_end", [None])[0]
    return (
        f"{machine['cpu']}, {machine['cores']} cores, flags `{' '.join(machine['instructions'])}`; "
        f"Keras backend {results['backend']}, oneDNN {onednn} ({how}), XLA {STATES[machine.get('xla')]}; "
        f"{machine['date']}, load {load[0]} at the start, {load[1]} at the end"
    )


def _block(block: dict) -> list[str]:
    rows = block["rows"]
    windows = block.get("windows")
    primary = windows["primary"] if windows else "cpu"
    dtype = block["matmul_dtype"]
    lines = [
        f"**{block['precision']}, XLA {STATES[block['jit_compile']]}**"
        + (
            f": {windows['windows']} windows ({windows['reason']}), others kept "
            f"{'?' if windows['others_cores'] is None else format(windows['others_cores'], '.2f')} cores "
            f"busy, primary figure: {'CPU' if primary == 'cpu' else 'wall'} time"
            if windows
            else ": windows not kept (ratios from the rows, no interval)"
        ),
        "",
        f"| model | tokens/s | CPU ms/step | MFU (real tokens, best {dtype} peak) | MFU (all positions, "
        "own peak) | ours vs it, CPU time (95 %) | ours vs it, wall time (95 %) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        if name == "ours":
            ratios = ["", ""]
        else:
            ratio = row_ratios(rows, name)
            ratios = [f"{ratio[m]:.2f}x{_interval(rows, name, m)}" for m in ("cpu", "wall")]
        mfu = f"{100 * row['mfu']:.1f} %" if "mfu" in row else "-"
        lines.append(
            f"| {NAMES[name]} | {row['tokens_per_s']:,.0f} | {1000 * row['cpu_step_s']:,.0f} | {mfu} | "
            f"{100 * row['mfu_positions_own_peak']:.1f} % | {ratios[0]} | {ratios[1]} |"
        )
    best, own = block.get("best_peak_flops_per_s"), block.get("peak_flops_per_s")
    lines += [
        "",
        f"Peaks ({dtype}): best of any kernel library "
        f"{'-' if best is None else f'{best / 1e9:.1f}'} GFLOP/s, this run's own "
        f"{'-' if own is None else f'{own / 1e9:.1f}'} GFLOP/s; padding "
        f"{100 * block['padding_share']:.1f} % of positions.",
    ]
    return lines


def markdown(results: dict) -> str:
    """The machine line, then one table per precision block, from one tx-bench --json result."""
    size = results["size"]
    lines = [
        _machine(results),
        "",
        "Size: " + ", ".join(f"{key} {value}" for key, value in size.items()) + ".",
    ]
    for block in results["blocks"]:
        lines += ["", *_block(block)]
    decoding = {key: rates for key, rates in results.get("decoding", {}).items() if isinstance(rates, dict)}
    if decoding:
        lines += [
            "",
            "| greedy decoding, float32 | prefix tokens/s | cached tokens/s | cached vs prefix |",
            "|---|---:|---:|---:|",
            *(
                f"| {key} output tokens | {rates['prefix']:,.0f} | {rates['cached']:,.0f} | "
                f"{rates['cached'] / rates['prefix']:.1f}x |"
                for key, rates in decoding.items()
            ),
        ]
    return "\n".join(lines)
