"""`tx-translate PATH [SENTENCE ...]`: translate with an exported SavedModel, as any client would."""

from __future__ import annotations

import sys
from pathlib import Path

from tx_keras.cli.command_parser import CommandParser, command_parser, use_tensorflow_backend
from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.quiet_startup import start_tensorflow


class _UsageError(ValueError):
    """A user's mistake: printed as one line, exit code 2."""


def _parser() -> CommandParser:
    parser = command_parser(
        "tx-translate",
        "Translate sentences (arguments, or one per line on stdin) with an exported model.",
        "path",
        metavar="PATH",
        help="a run folder (uses PATH/export/saved_model) or a SavedModel",
    )
    parser.add_argument("sentences", nargs="*", metavar="SENTENCE", help="default: read lines from stdin")
    parser.add_argument("--attention", action="store_true", help="print each sentence's alignment table")
    parser.add_argument(
        "--layer", type=int, help="decoder layer whose cross-attention is shown (default: last)"
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help="write the alignment heat-map (FILE-2.png, ... for more)"
    )
    return parser


def _saved_model(path: Path) -> Path:
    """The SavedModel PATH names (saved_model_loader.find_saved_model), or one line saying why not."""
    from tx_keras.export.saved_model_loader import find_saved_model
    from tx_keras.run_folder.summary import SUMMARY_NAME

    found = find_saved_model(path)
    if found is None:
        hint = " (run tx-export on it first)" if (path / SUMMARY_NAME).is_file() else ""
        raise _UsageError(f"{path} is neither a SavedModel nor a run folder with an export{hint}")
    return found


def _plot_paths(plot: str, count: int) -> list[Path]:
    path = Path(plot)
    if count == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{i + 1}{path.suffix}") for i in range(count)]


def _real(tokens) -> list[str]:
    """Decoded tokens without the padding "" at the end; output rows stop at their EOS."""
    words = [token.decode("utf-8") for token in tokens]
    words = [word for word in words if word]
    return words[: words.index("<eos>") + 1] if "<eos>" in words else words


def _show_attention(result: dict, args, plots: list[Path] | None) -> None:
    import numpy as np

    from tx_keras.plots.alignment import alignment_table, save_alignment_png

    attention = result["cross_attention"].numpy()  # (B, layers, T, Ts) or (B, layers, heads, T, Ts)
    layers = attention.shape[1]
    layer = layers if args.layer is None else args.layer
    if not 1 <= layer <= layers:
        raise _UsageError(f"--layer {layer} does not exist; the decoder has layers 1..{layers}")
    for i, translation in enumerate(result["translation"].numpy()):
        outputs, sources = (
            _real(result["output_tokens"][i].numpy()),
            _real(result["source_tokens"][i].numpy()),
        )
        weights = attention[i, layer - 1]
        heads = weights if weights.ndim == 3 else weights[None]
        heads = heads[:, : len(outputs), : len(sources)]
        print(translation.decode("utf-8"))
        if args.attention:
            print(f"cross-attention, decoder layer {layer} of {layers}, mean over heads:")
            print(alignment_table(np.mean(heads, axis=0), outputs, sources))
            print()
        if plots:
            title = f"cross-attention, decoder layer {layer}" + (
                " (mean over heads)" if weights.ndim == 2 else ""
            )
            save_alignment_png(plots[i], heads, outputs, sources, title)


def _sentences(typed: list[str]) -> list[str]:
    """The arguments, or stdin's non-blank lines read as bytes, through the text rule (data/text_rule.py):
    cleaned as the training text was, or one line saying which sentence it refuses and why."""
    from tx_keras.data.text_rule import RefusedText, apply_text_rule

    lines = typed or list(getattr(sys.stdin, "buffer", sys.stdin))  # bytes: invalid UTF-8 is refused too
    sentences = []
    for number, line in enumerate(lines, 1):
        try:
            sentence = apply_text_rule(line)
        except RefusedText as error:
            where = f"sentence {number}" if typed else f"line {number} of stdin"
            raise _UsageError(f"{where}: {error}") from None
        if sentence or typed:
            sentences.append(sentence)
    return sentences


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # most often a sentence that begins with "-" (found by tests/test_fuzz_sentences.py)
        parser.fail(
            f"unrecognized arguments: {' '.join(unknown)} (a sentence that begins with '-' goes after --: "
            f"{parser.prog} PATH -- SENTENCE)"
        )
    try:
        saved_model = _saved_model(Path(args.path))
        sentences = _sentences(args.sentences)
        if args.layer is not None and args.layer < 1:
            raise _UsageError(f"--layer {args.layer} must be >= 1")
    except _UsageError as error:
        parser.fail(str(error))
    if not sentences:
        return
    use_tensorflow_backend(parser)  # a SavedModel is TensorFlow's, whatever the run trained on
    configure_allocator()  # before TensorFlow, as every command that runs the model
    start_tensorflow()  # its CUDA start-up lines stay off stderr
    import tensorflow as tf

    from tx_keras.decoding.row_parts import plan_decoding_threads
    from tx_keras.export.saved_model_loader import decoding_loops, load_saved_model

    # Before the runtime starts: each of the export's decoding loops on a core of its own.
    plan_decoding_threads(decoding_loops(saved_model))

    model = load_saved_model(saved_model)
    texts = tf.constant(sentences)
    try:
        if args.attention or args.plot:
            plots = _plot_paths(args.plot, len(sentences)) if args.plot else None
            _show_attention(model.signatures["translate_with_attention"](texts=texts), args, plots)
        else:
            for translation in model.signatures["translate"](texts=texts)["translation"].numpy():
                print(translation.decode("utf-8"))
    except _UsageError as error:
        parser.fail(str(error))


if __name__ == "__main__":
    main()
