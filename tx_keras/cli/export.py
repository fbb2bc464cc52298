"""`tx-export RUN_DIR`: a finished run folder -> a SavedModel a serving stack loads without our code."""

from __future__ import annotations

import argparse

from tx_keras.cli.command_parser import CommandParser, command_parser, use_tensorflow_backend
from tx_keras.export.export_config import ATTENTION_MODES
from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.quiet_startup import start_tensorflow


def _parser() -> CommandParser:
    parser = command_parser(
        "tx-export",
        "Write RUN_DIR/export/ (saved_model/, model.keras, export.json) from a completed run.",
        "run_dir",
        metavar="RUN_DIR",
        help="a tx-train run folder (has summary.json, model.keras)",
    )
    parser.add_argument("--beam-width", type=int, help="beam width, 1 = greedy (default: the run's export.*)")
    parser.add_argument("--length-penalty", type=float, help="GNMT length penalty alpha (default: the run's)")
    parser.add_argument(
        "--attention",
        choices=ATTENTION_MODES,
        help="translate_with_attention: mean over heads or every head",
    )
    parser.add_argument(  # tx-train on another backend, exporting a run that has no summary yet
        "--during-run", action="store_true", help=argparse.SUPPRESS
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    from dataclasses import replace
    from pathlib import Path

    use_tensorflow_backend(parser)  # a SavedModel is TensorFlow's, whatever the run trained on
    configure_allocator()  # before TensorFlow: tracing the decoders allocates as training does
    start_tensorflow()  # before run_export, which imports TensorFlow: its CUDA start-up lines stay off stderr
    from tx_keras.export.run_export import NotARunError, export_run, read_run_summary, run_settings

    run_dir = Path(args.run_dir)
    try:
        summary = None if args.during_run else read_run_summary(run_dir)
        settings = run_settings(summary or {})
        chosen = {
            "beam_width": args.beam_width,
            "length_penalty": args.length_penalty,
            "attention": args.attention,
        }
        settings = replace(settings, **{key: value for key, value in chosen.items() if value is not None})
    except (NotARunError, ValueError) as error:
        parser.fail(str(error))
    saved_model = export_run(run_dir, settings, completed=not args.during_run)
    print(saved_model)


if __name__ == "__main__":
    main()
