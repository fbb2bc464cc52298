"""`tx-compare SWEEP_DIR`: every run of a sweep in one table, best first; the runs grouped by setting (runs
of one sweep folder that differ only by seed) with mean ± sd, intervals, and every pair of groups tested
(Welch, Holm over all pairs) with each group's difference to the best and its interval; curves,
per-knob and per-group plots, and the grouped result as CSV and JSON. `--importance`: an Optuna sweep's
parameter importances instead, rebuilt from its run folders (its study lived in memory)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tx_keras.cli.command_parser import CommandParser, command_parser

# The event-file reader imports TensorFlow: its start-up lines (CUDA probing on a CPU) stay off stderr.
from tx_keras.runtime.quiet_startup import start_tensorflow

TEST_PREFIX = "test_"  # the test split's figures: --validation-only leaves them out


def without_test(metrics: dict[str, float]) -> dict[str, float]:
    """A run's figures less the test split's, so a choice made on what is shown is a validation choice."""
    return {name: value for name, value in metrics.items() if not name.startswith(TEST_PREFIX)}


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
        "--pool-sweeps",
        action="store_true",
        help="group runs of different sweep folders that share a setting (default: each sweep apart)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write comparison.md/.csv, groups.csv/.json and the PNGs (default: the sweep folder)",
    )
    parser.add_argument(
        "--validation-only",
        action="store_true",
        help="show and write no test_* figure: choose on validation with it, then read test once without",
    )
    parser.add_argument(
        "--baseline",
        metavar="FOLDER",
        default=None,
        help="also test every group against the group of the runs in SWEEP_DIR/FOLDER: one-sided Welch "
        "in the better direction, Holm over the candidates (does a candidate beat what we have?)",
    )
    parser.add_argument(
        "--importance",
        action="store_true",
        help="print Optuna's parameter importances of an Optuna sweep's trials (by its trainer.objective) "
        "and its best trial instead; writes nothing",
    )
    return parser


def _print_importances(parser: CommandParser, sweep_dir: Path) -> None:
    """The importances need Optuna, not TensorFlow: no event file is read."""
    from tx_keras.comparison.param_importance import importance_text, param_importances
    from tx_keras.user_error import UserError

    try:
        result = param_importances(sweep_dir)
    except UserError as error:
        parser.fail(str(error))
    print(f"tx-compare: Optuna's parameter importances of {sweep_dir} by {result.objective}")
    print(importance_text(result), end="")


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.sweep_dir.is_dir():
        parser.fail(f"{args.sweep_dir} is not a folder")
    if args.importance:
        _print_importances(parser, args.sweep_dir)
        return
    start_tensorflow()
    from tx_keras.comparison import collect_runs
    from tx_keras.comparison.baseline import against_baseline, baseline_text
    from tx_keras.comparison.group_hparams import write_group_sessions
    from tx_keras.comparison.group_table import group_caption, group_rows, groups_json
    from tx_keras.comparison.groups import compare_groups, varying_knobs
    from tx_keras.comparison.plots import plot_curves, plot_groups, plot_metric_by_knob
    from tx_keras.comparison.table import METRIC_COLUMNS, as_csv, as_markdown, as_text, table_rows
    from tx_keras.run_folder.atomic_write import write_text
    from tx_keras.user_error import UserError

    try:
        runs = collect_runs(args.sweep_dir, nested=True)
    except UserError as error:  # e.g. a run's .hydra/overrides.yaml that is not a list
        parser.fail(str(error))
    if not runs:
        parser.fail(f"{args.sweep_dir} holds no tx-train runs")
    if args.validation_only:
        if args.metric.startswith(TEST_PREFIX):
            parser.fail(f"--validation-only hides {args.metric}; choose by a validation metric")
        runs = [replace(run, metrics=without_test(run.metrics)) for run in runs]
    header, rows = table_rows(runs, args.metric)
    groups = compare_groups(runs, args.metric, pool_sweeps=args.pool_sweeps)
    versus = None
    if args.baseline is not None:  # checked before anything is written
        try:
            versus = against_baseline(groups, args.baseline, args.metric)
        except UserError as error:
            parser.fail(str(error))
    present = {name for run in runs for name in run.metrics}
    others = [name for name in METRIC_COLUMNS if name in present and name != args.metric]
    group_header, group_table = group_rows(groups, args.metric, others)
    caption = group_caption(groups, args.metric, len(runs))
    out = args.out or args.sweep_dir
    out.mkdir(parents=True, exist_ok=True)
    markdown = as_markdown(header, rows) + f"\n{caption}\n\n" + as_markdown(group_header, group_table)
    write_text(out / "comparison.md", markdown)
    write_text(out / "comparison.csv", as_csv(*table_rows(runs, args.metric, exact=True)))
    write_text(out / "groups.csv", as_csv(group_header, group_table))
    write_text(out / "groups.json", groups_json(groups, args.metric, [args.metric, *others]))
    plot_curves(runs, out / "validation_curves.png")
    plot_metric_by_knob(runs, args.metric, out / f"{args.metric}_by_knob.png")
    plot_groups(groups, varying_knobs(groups), args.metric, out / f"{args.metric}_by_group.png")
    sessions = write_group_sessions(out, groups, [args.metric, *others])
    if args.metric.startswith(TEST_PREFIX):
        print(f"tx-compare: note: choices belong to validation; {args.metric} reports the one chosen")
    print(as_text(header, rows), end="")
    print(f"\n{caption}\n")
    print(as_text(group_header, group_table), end="")
    print(
        f"tx-compare: wrote comparison.md, comparison.csv, groups.csv, groups.json, validation_curves.png, "
        f"{args.metric}_by_knob.png, {args.metric}_by_group.png to {out}"
    )
    if sessions:
        print(f"tx-compare: one HParams row per group in {sessions} (tx-board {out})")
    if versus is not None:
        print("\n" + baseline_text(versus, args.baseline, args.metric), end="")


if __name__ == "__main__":
    main()
