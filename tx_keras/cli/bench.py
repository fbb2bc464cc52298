"""`tx-bench`: our Transformer against Keras peers of the same size, on this machine, in one run."""

from __future__ import annotations

import argparse
import json
import os
import sys

# A leaf module, no Keras or TensorFlow.
from tx_keras.benchmark.settings import (
    QUICK_REAL_PATH,
    QUICK_SIZE,
    QUICK_TIMING,
    BenchSettings,
    BenchSize,
    RealPathSize,
    Timing,
)
from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.keras_backend import BACKENDS, missing_backend, select_backend
from tx_keras.runtime.quiet_startup import start_tensorflow

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
# What only the TensorFlow run measures: a run on another backend says it left them out.
TENSORFLOW_ONLY = (
    "the real tf.data training path, greedy decoding and the SavedModel (run --backend tensorflow)"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tx-bench",
        description="Training throughput (matched precision blocks), FLOPs utilisation, the real training "
        "path and greedy decoding speed of tx_keras's Transformer next to keras.layers.MultiHeadAttention "
        "and KerasHub builds of the same size.",
    )
    default = BenchSize()
    for field, value in vars(default).items():
        parser.add_argument(
            f"--{field.replace('_', '-')}", type=int, default=value, help=f"(default {value})"
        )
    parser.add_argument(
        "--backend",
        default="tensorflow",
        help="Keras backend(s), comma-separated: tensorflow (everything below), jax (the synthetic "
        "training rows only, without importing TensorFlow), or tensorflow,jax: the training rows of both, "
        "one process each, windows interleaved, TensorFlow with and without XLA, in one table "
        "(default tensorflow)",
    )
    parser.add_argument(
        "--windows",
        type=int,
        default=Timing.windows,
        help="the fewest interleaved timed windows per block (>= 2; rounded up to even); each row is "
        f"their geometric mean (default {Timing.windows})",
    )
    parser.add_argument(
        "--target-half-width",
        type=float,
        default=Timing.target_half_width,
        help="more windows until every ratio's 95 %% interval is within +- this share of it (default "
        f"{Timing.target_half_width}: +-{100 * Timing.target_half_width:.0f} %%)",
    )
    parser.add_argument(
        "--time-cap",
        type=float,
        default=Timing.time_cap_s,
        help=f"...or until a block has timed windows for this many seconds (default {Timing.time_cap_s:.0f})",
    )
    parser.add_argument("--steps", type=int, default=Timing.steps, help="training steps per window")
    parser.add_argument("--warmup", type=int, default=Timing.warmup, help="untimed training steps first")
    parser.add_argument(
        "--repeats",
        type=int,
        default=Timing.repeats,
        help="timed calls of each decoder, in alternated turns: tokens/s of the median call, and the "
        f"cached-vs-prefix ratio with its 95 %% interval over the turns; where tx-translate's thread pools "
        f"differ from TensorFlow's, a process on each, timed in turns (default {Timing.repeats})",
    )
    parser.add_argument(
        "--matmul-size",
        type=int,
        default=Timing.matmul_size,
        help=f"n of the n x n matmuls that measure the peak MFU is a share of (default {Timing.matmul_size}; "
        "a GPU needs 8192 to come near its rate)",
    )
    parser.add_argument(
        "--precisions",
        default=None,
        help="comma-separated precision blocks (default: those this machine supports: float32, plus "
        "mixed_bfloat16 on a bf16 CPU or a GPU, mixed_float16 on a GPU)",
    )
    parser.add_argument(
        "--jit",
        choices=("auto", "true", "false"),
        default=None,
        help="XLA for every model of a block (default: trainer.jit_compile, auto = on with a GPU)",
    )
    parser.add_argument(
        "--onednn",
        choices=("on", "off"),
        default=None,
        help="TensorFlow's oneDNN CPU kernels for the whole run (TF_ENABLE_ONEDNN_OPTS; default: "
        "TensorFlow's choice for this CPU, printed in the header)",
    )
    parser.add_argument(
        "--every-position",
        action="store_true",
        help="also race ours training on every position, padding included, as the peers do (TensorFlow; "
        "ours otherwise leaves padding rows out of its FFN sublayers, vocabulary projection and loss): "
        "ours at equal work against each peer, and what skipping padding is worth, in every block and on "
        "the real path (its rows alternated ours, every position, every position, ours)",
    )
    parser.add_argument(
        "--row-parts",
        action="store_true",
        help="also race the real path against itself on TensorFlow's default thread pools, the whole batch "
        "a step (tx-train sets one intra-op thread and cuts each step's rows in two parts on 2 cores; "
        "rows alternated ours, default pools, default pools, ours, each in a fresh process)",
    )
    parser.add_argument("--no-real-path", action="store_true", help="skip the tatoeba_small fit row")
    parser.add_argument(
        "--no-saved-model", action="store_true", help="skip exporting and timing a SavedModel"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a tiny size, 4 short windows or 1 s of them (a smoke test)"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument(
        "--markdown",
        metavar="FILE.json",
        nargs="+",
        default=None,
        help="measure nothing: print docs/performance.md's table of one machine kind from saved "
        "tx-bench --json results (one row group per file, e.g. default kernels, --onednn on, --jit true)",
    )
    return parser


def _shipped_settings() -> tuple[bool | str, bool]:
    """(trainer.jit_compile, model.fused_qkv) as the shipped config sets them."""
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        cfg = compose(config_name="config")
    return cfg.trainer.jit_compile, bool(cfg.model.fused_qkv)


def _fail(message: str) -> None:
    print(f"tx-bench: error: {message}", file=sys.stderr)
    sys.exit(2)


def _markdown(paths: list[str]) -> None:
    """Saved results of one machine kind as one markdown table; imports no Keras."""
    from tx_keras.benchmark.markdown_table import MixedMachines, markdown

    runs = []
    for path in paths:
        try:
            with open(path) as file:
                runs.append(json.load(file))
        except (OSError, ValueError) as error:
            _fail(f"--markdown {path}: {error}")
        if "backends" in runs[-1]:
            _fail(f"--markdown {path}: renders tx-bench --json of one backend, not the backend column's")
    try:
        print(markdown(runs))
    except MixedMachines as error:
        _fail(str(error))


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.markdown:
        _markdown(args.markdown)
        return
    fields = {field: getattr(args, field) for field in vars(BenchSize())}
    counts = (args.steps, args.repeats, args.matmul_size)
    if min(fields.values()) < 1 or min(counts) < 1 or args.warmup < 0 or args.windows < 2:
        _fail("sizes, --steps, --repeats and --matmul-size must be >= 1, --windows >= 2")
    if args.target_half_width <= 0 or args.time_cap < 0:
        _fail("--target-half-width must be > 0 and --time-cap >= 0")
    if fields["d_model"] % fields["num_heads"]:
        _fail(f"--num-heads {fields['num_heads']} must divide --d-model {fields['d_model']}")
    precisions = args.precisions.split(",") if args.precisions else None
    if precisions and not set(precisions) <= set(PRECISIONS):
        _fail(f"--precisions {args.precisions}: choose from {', '.join(PRECISIONS)}")
    backends = args.backend.split(",")
    if not set(backends) <= set(BACKENDS) or len(set(backends)) < len(backends):
        _fail(f"--backend {args.backend}: choose from {', '.join(BACKENDS)}, each once")
    if args.every_position and backends != ["tensorflow"]:
        _fail("--every-position runs on TensorFlow alone: on JAX ours computes every position already")
    if args.row_parts and (backends != ["tensorflow"] or args.no_real_path):
        _fail("--row-parts races the real path on TensorFlow: not with --backend jax or --no-real-path")
    for backend in backends:
        if why := missing_backend(backend):
            _fail(f"--backend {backend} {why}")
    if len(backends) > 1 and args.jit is not None:
        _fail("--jit sets one backend's XLA; the backend column runs TensorFlow with and without it")
    if args.onednn:  # read once, when TensorFlow starts
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if args.onednn == "on" else "0"
    jit, fused_qkv = _shipped_settings()
    if args.jit is not None:
        jit = {"auto": "auto", "true": True, "false": False}[args.jit]
    settings = BenchSettings(
        size=QUICK_SIZE if args.quick else BenchSize(**fields),
        timing=QUICK_TIMING
        if args.quick
        else Timing(
            args.windows,
            args.steps,
            args.warmup,
            args.repeats,
            args.matmul_size,
            target_half_width=args.target_half_width,
            time_cap_s=args.time_cap,
        ),
        precisions=tuple(precisions) if precisions else None,
        jit_compile=jit,
        fused_qkv=fused_qkv,
        every_position=args.every_position,
        real_path=None if args.no_real_path else QUICK_REAL_PATH if args.quick else RealPathSize(),
        saved_model=not args.no_saved_model,
        row_parts=args.row_parts,
    )
    if len(backends) > 1:
        _backend_column(backends, settings, args.json)
    elif backends == ["jax"]:
        _jax_rows(settings, args.json)
    else:
        _tensorflow_run(settings, args.json)


def _backend_column(backends: list[str], settings: BenchSettings, as_json: bool) -> None:
    """Each backend's training rows in a worker process of its own, printed side by side; this process
    imports no Keras (it would fix a backend)."""
    from tx_keras.benchmark.backend_race import backend_race
    from tx_keras.benchmark.parity import ParityError
    from tx_keras.benchmark.report import render_backends
    from tx_keras.benchmark.worker_process import WorkerFailed

    try:
        results = backend_race(backends, settings)
    except (ParityError, WorkerFailed) as error:
        _fail(str(error))
    print(json.dumps(results, indent=2) if as_json else render_backends(results))


def _jax_rows(settings: BenchSettings, as_json: bool) -> None:
    """The synthetic training rows on JAX, in this process, with no TensorFlow imported."""
    select_backend("jax")
    configure_allocator()
    from tx_keras.benchmark.parity import ParityError
    from tx_keras.benchmark.report import render
    from tx_keras.benchmark.training_blocks import finish, training_blocks

    try:
        results = training_blocks(settings)
    except ParityError as error:
        _fail(str(error))
    results["left_out_parts"] = [TENSORFLOW_ONLY]
    finish(results)
    print(json.dumps(results, indent=2) if as_json else render(results))


def _tensorflow_run(settings: BenchSettings, as_json: bool) -> None:
    """Everything tx-bench measures, on TensorFlow."""
    select_backend("tensorflow")
    configure_allocator()  # as tx-train's, so the real path is timed as users train
    start_tensorflow()  # its CUDA start-up lines stay off stderr
    from tx_keras.benchmark.parity import ParityError
    from tx_keras.benchmark.report import render
    from tx_keras.benchmark.suite import run_benchmark
    from tx_keras.benchmark.worker_process import WorkerFailed

    try:
        results = run_benchmark(settings)
    except (ParityError, WorkerFailed) as error:
        _fail(str(error))
    print(json.dumps(results, indent=2) if as_json else render(results))


if __name__ == "__main__":
    main()
