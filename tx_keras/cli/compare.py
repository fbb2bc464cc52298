"""`tx-compare SWEEP_DIR`: every run of a sweep in one table, best first, plus curves and per-knob plots."""

from __future__ import annotations

from pathlib import Path

from tx_keras.cli.command_parser import CommandParser, command_parser

# The event-file reader imports TensorFlow: its start-up lines (CUDA probing on a CPU) stay off stderr.
from tx_keras.runtime.quiet_startup import start_tensorflow


def _parser() -> CommandParser:
    parser = command_parser(
        "tx-compare",
        "Compare the runs of a tx-train sweep, or every run under a folder.",
        "sweep_dir",
        type=Path,
        help="a sweep folder (hydra.sweep.dir), or any folder holding runs at any depth (e.g. outputs)",
    )
    parser.add_argument(
        "--metric",
        default="validation_exact_match",
        help="summary metric to sort by (losses ascending, others descending)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write comparison.md/.csv and the PNGs (default: the sweep folder)",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.sweep_dir.is_dir():
        parser.fail(f"{args.sweep_dir} is not a folder")
    start_tensorflow()
    from tx_keras.comparison import collect_runs
    from tx_keras.comparison.plots import plot_curves, plot_metric_by_knob
    from tx_keras.comparison.table import as_csv, as_markdown, as_text, table_rows
    from tx_keras.run_folder.atomic_write import write_text
    from tx_keras.user_error import UserError

    try:
        runs = collect_runs(args.sweep_dir, nested=True)
    except UserError as error:  # e.g. a run's .hydra/overrides.yaml that is not a list
        parser.fail(str(error))
    if not runs:
        parser.fail(f"{args.sweep_dir} holds no tx-train runs")
    header, rows = table_rows(runs, args.metric)
    out = args.out or args.sweep_dir
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "comparison.md", as_markdown(header, rows))
    write_text(out / "comparison.csv", as_csv(header, rows))
    plot_curves(runs, out / "validation_curves.png")
    plot_metric_by_knob(runs, args.metric, out / f"{args.metric}_by_knob.png")
    print(as_text(header, rows), end="")
    print(
        f"tx-compare: wrote comparison.md, comparison.csv, validation_curves.png, "
        f"{args.metric}_by_knob.png to {out}"
    )


if __name__ == "__main__":
    main()
