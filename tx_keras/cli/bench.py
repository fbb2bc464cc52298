"""`tx-bench`: our Transformer against Keras peers of the same size, on this machine, in one run."""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter out of the table

from tx_keras.benchmark.size import BenchSize  # noqa: E402

# A size that runs in seconds, for tests and a quick look; its numbers say nothing about speed.
QUICK_SIZE = BenchSize(
    d_model=32, encoder_layers=1, decoder_layers=1, num_heads=2, dff=64, batch=8, length=8, vocab=50
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tx-bench",
        description="Training throughput, FLOPs utilisation and greedy decoding speed of tx_keras's "
        "Transformer next to keras.layers.MultiHeadAttention and KerasHub builds of the same size.",
    )
    default = BenchSize()
    for field, value in vars(default).items():
        parser.add_argument(
            f"--{field.replace('_', '-')}", type=int, default=value, help=f"(default {value})"
        )
    parser.add_argument("--windows", type=int, default=5, help="timed training windows; the median is shown")
    parser.add_argument("--steps", type=int, default=10, help="training steps per window")
    parser.add_argument("--warmup", type=int, default=3, help="untimed training steps first")
    parser.add_argument("--repeats", type=int, default=3, help="timed decoding calls; the median is shown")
    parser.add_argument(
        "--no-saved-model", action="store_true", help="skip exporting and timing a SavedModel"
    )
    parser.add_argument("--quick", action="store_true", help="a tiny size and 2 short windows (a smoke test)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    return parser


def _our_defaults():
    """Our speed switches as the shipped config sets them (conf/trainer/default.yaml, model/small.yaml)."""
    from hydra import compose, initialize_config_module

    from tx_keras.benchmark.suite import Settings

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config")
    return Settings(cfg.trainer.precision, cfg.trainer.jit_compile, cfg.model.fused_qkv)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    fields = {field: getattr(args, field) for field in vars(BenchSize())}
    if min(fields.values()) < 1 or min(args.windows, args.steps, args.repeats) < 1 or args.warmup < 0:
        print("tx-bench: error: sizes, --windows, --steps and --repeats must be >= 1", file=sys.stderr)
        sys.exit(2)
    if fields["d_model"] % fields["num_heads"]:
        print(
            f"tx-bench: error: --num-heads {fields['num_heads']} must divide --d-model {fields['d_model']}",
            file=sys.stderr,
        )
        sys.exit(2)
    from tx_keras.benchmark.report import render
    from tx_keras.benchmark.suite import Timing, run_benchmark

    if args.quick:
        size, timing = (
            QUICK_SIZE,
            Timing(windows=2, steps=2, warmup=1, repeats=1, matmul_size=256, outputs=(4, 8)),
        )
    else:
        size = BenchSize(**fields)
        timing = Timing(args.windows, args.steps, args.warmup, args.repeats)
    results = run_benchmark(size, _our_defaults(), timing, saved_model=not args.no_saved_model)
    print(json.dumps(results, indent=2) if args.json else render(results))


if __name__ == "__main__":
    main()
