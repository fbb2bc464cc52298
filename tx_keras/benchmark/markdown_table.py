"""docs/performance.md's tables, rendered from `tx-bench --json` files: the one source of its figures.

One table per machine kind: the runs of one machine (e.g. TensorFlow's default kernels, oneDNN forced on,
XLA on) are rows of one table, each with its precision, oneDNN and XLA state. Every ratio is computed
here from the rows it stands beside, the same way for every run: ours' tokens/s over the row's (wall
time), the row's CPU ms per step over ours' (CPU time). tx-bench's rows are geometric means of their
windows, so these equal the paired-window ratios tx-bench printed, and the 95 % interval is recomputed
from the windows the JSON keeps (ratio_interval.py). It reads one format, the one `tx-bench --json`
writes; parts a run did not measure (the real path, decoding, a second pool setting) are simply absent.
Imports no Keras: `tx-bench --markdown` runs anywhere.
"""

from __future__ import annotations

from tx_keras.benchmark.compared_pairs import compared_pairs
from tx_keras.benchmark.machine import ONEDNN_STATES
from tx_keras.benchmark.ratio_interval import ratio_interval
from tx_keras.benchmark.report import NAMES, decoding_interval, pools_gain_text

STATES = {True: "on", False: "off", None: "unknown"}
MEASURES = {"cpu": "CPU", "wall": "wall"}


class MixedMachines(ValueError):
    """Files from different CPUs: one table is one machine kind."""


def row_ratios(rows: dict[str, dict], name: str, mine: str = "ours") -> dict[str, float]:
    """How many times faster row `mine` (ours) ran than row `name`, by wall and CPU time, from the two
    rows alone."""
    ours, theirs = rows[mine], rows[name]
    return {
        "wall": ours["tokens_per_s"] / theirs["tokens_per_s"],
        "cpu": theirs["cpu_step_s"] / ours["cpu_step_s"],
    }


def _interval(rows: dict[str, dict], name: str, measure: str, mine: str = "ours") -> str:
    key = {"wall": "window_step_s", "cpu": "window_cpu_step_s"}[measure]
    interval = ratio_interval(rows[mine][key], rows[name][key])
    return f" ({interval['low']:.2f}-{interval['high']:.2f})"


def _load(machine: dict) -> str:
    start, end = machine["load_average"], machine["load_average_end"]
    return f"load {start[0]:.2f} at the start, {end[0]:.2f} at the end"


def _onednn(machine: dict) -> str:
    how = f"TF_ENABLE_ONEDNN_OPTS={machine['onednn_env']}" if machine["onednn_env"] is not None else "default"
    return f"{ONEDNN_STATES[machine['onednn']]} ({how})"


def _windows(block: dict) -> str:
    windows = block["windows"]
    others = "?" if windows["others_cores"] is None else f"{windows['others_cores']:.2f}"
    return f"{windows['windows']}, {windows['reason']}; others {others} cores, {MEASURES[windows['primary']]}"


def _rows(run: int, results: dict, block: dict) -> list[str]:
    rows, machine = block["rows"], results["machine"]
    lines = []
    for name, row in rows.items():
        ratios = ["", ""]
        if name != "ours":
            ratio = row_ratios(rows, name)
            ratios = [f"{ratio[m]:.2f}x{_interval(rows, name, m)}" for m in ("cpu", "wall")]
        mfu = f"{100 * row['mfu']:.1f} %"
        lines.append(
            f"| {run} | {block['precision']} | {_onednn(machine)} | {STATES[block['jit_compile']]} | "
            f"{NAMES[name]} | {row['tokens_per_s']:,.0f} | {1000 * row['cpu_step_s']:,.0f} | {mfu} | "
            f"{100 * row['mfu_positions_own_peak']:.1f} % | {ratios[0]} | {ratios[1]} | "
            f"{_windows(block) if name == 'ours' else ''} |"
        )
    return lines


def _equal_work(block: dict) -> str:
    """Ours trained on every position (tx-bench --every-position) against each peer: the ratios at equal
    work, which the table's rows (ours against each) do not show."""
    rows = block["rows"]
    if "ours_every_position" not in rows:
        return ""
    ratios = ", ".join(
        f"{NAMES[peer]} "
        + " / ".join(
            f"{row_ratios(rows, peer, 'ours_every_position')[m]:.2f}x"
            f"{_interval(rows, peer, m, 'ours_every_position')}"
            for m in ("cpu", "wall")
        )
        for mine, peer in compared_pairs(rows)
        if mine == "ours_every_position"
    )
    return f"; {block['precision']}, ours at every position against {ratios} (CPU / wall)"


def _run_note(run: int, results: dict) -> str:
    machine = results["machine"]
    peaks = "; ".join(
        f"{block['precision']}: best {block['best_peak_flops_per_s'] / 1e9:.1f}, own "
        f"{block['peak_flops_per_s'] / 1e9:.1f} GFLOP/s, padding {100 * block['padding_share']:.1f} %"
        for block in results["blocks"]
    )
    # A run without a peer's rows says why, or they read as measured and dropped.
    left_out = "".join(f"; left out: {NAMES[name]}, {why}" for name, why in results["left_out"].items())
    equal_work = "".join(_equal_work(block) for block in results["blocks"])
    # The day only: a page shows what was measured on which day, not at what time of it.
    day = machine["date"].split()[0]
    return f"{run}. {day}, {_load(machine)}; matmul peaks {peaks}{left_out}{equal_work}."


def markdown(runs: list[dict]) -> str:
    """One machine kind's table from its tx-bench --json results: a machine line, one row per model of
    every precision block of every run, then a line per run (date, load, peaks). Runs are numbered in the
    order they were measured, whatever order the files come in (a shell's `*.json` puts 10 before 2).
    Raises MixedMachines when the runs come from different CPUs or GPUs."""
    runs = sorted(runs, key=lambda run: run["machine"]["date"])  # "YYYY-MM-DD HH:MM UTC" sorts as time
    machine = runs[0]["machine"]
    kinds = {
        (run["machine"]["cpu"], tuple(run["machine"]["instructions"]), tuple(run["machine"]["gpus"]))
        for run in runs
    }
    if len(kinds) > 1:
        raise MixedMachines(
            f"one table is one machine kind; these runs come from {len(kinds)}: {sorted(kinds)}"
        )
    size = runs[0]["size"]
    lines = [
        f"{machine['cpu']}, {machine['cores']} cores, flags `{' '.join(machine['instructions'])}`; "
        + (f"GPU {', '.join(machine['gpus'])}; " if machine["gpus"] else "")
        + f"Keras backend {runs[0]['backend']}; size: "
        + ", ".join(f"{k} {v}" for k, v in size.items())
        + ".",
        "",
        "| run | precision | oneDNN | XLA | model | tokens/s | CPU ms/step | MFU (real tokens, best peak) | "
        "MFU (all positions, own peak) | ours vs it, CPU time (95 %) | ours vs it, wall time (95 %) | "
        "windows |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run, results in enumerate(runs, 1):
        for block in results["blocks"]:
            lines += _rows(run, results, block)
    lines += ["", *(_run_note(run, results) for run, results in enumerate(runs, 1))]
    real = [(run, results) for run, results in enumerate(runs, 1) if "real_path" in results]
    if real:
        lines += ["", *(_real_path_line(run, results) for run, results in real)]
    decoding = [
        (run, key, rates, where)
        for run, results in enumerate(runs, 1)
        for part, where in _decoding_parts(results)
        for key, rates in results[part].items()
        if isinstance(rates, dict)
    ]
    if decoding:
        lines += [
            "",
            "| run | greedy decoding, float32 | prefix tokens/s | cached tokens/s | cached vs prefix |",
            "|---|---|---:|---:|---:|",
            *(
                f"| {run} | {key} output tokens, {where} | {rates['prefix']:,.0f} | {rates['cached']:,.0f} | "
                f"{rates['cached'] / rates['prefix']:.1f}x{decoding_interval(rates)} |"
                for run, key, rates, where in decoding
            ),
        ]
    paired = [(run, results) for run, results in enumerate(runs, 1) if "decoding_pools" in results]
    if paired:
        lines.append("")
        lines += [
            f"Run {run}: tx-translate's pools against TensorFlow's default pools, two processes timed in "
            f"turns, tokens/s per turn: {pools_gain_text(results['decoding_pools'])}."
            for run, results in paired
        ]
    return "\n".join(lines)


def _real_path_line(run: int, results: dict) -> str:
    """The real path's steps a minute and cores, and what the row parts and the gather were worth where
    the run raced them (`--row-parts`, `--every-position`)."""
    row = results["real_path"]
    text = (
        f"Run {run}, real path (`fit` of the {row['preset']} model, {row['precision']}): "
        f"{row['steps_per_minute']:,.0f} steps a minute at {row['cpu_per_wall']:.2f} of {row['cores']} cores "
        f"busy, padding {100 * row['padding_share']:.1f} %"
    )
    if "real_path_parts" in results:
        parts = results["real_path_parts"]
        text += f"; the step in {parts['step_parts']} row parts worth {parts['ratio']:.2f}x by wall time"
    if "real_path_gather" in results:
        text += f"; the gather of real positions worth {results['real_path_gather']['ratio']:.2f}x"
    return text + "."


def _decoding_parts(results: dict) -> list[tuple[str, str]]:
    """The run's decoding results and the thread pools each ran on, for the table's second column: a
    run on a CPU where tx-translate's pools differ from TensorFlow's decodes on both."""
    if "decoding" not in results:
        return []
    if "decoding_default_pools" not in results:
        return [("decoding", "own process, TensorFlow's default pools")]
    return [
        ("decoding", "own process, tx-translate's pools (1 intra-op thread)"),
        ("decoding_default_pools", "own process, TensorFlow's default pools"),
    ]
