"""`tx-bench`'s results as the readable side-by-side table a person compares at a glance."""

from __future__ import annotations


def _row(name: str, values: dict | None) -> str:
    if values is None:
        return f"  {name:<34} {'not installed (pip install tx_keras[bench])':>40}"
    return (
        f"  {name:<34} {values['tokens_per_s']:>10,.0f} {values['flops_per_s'] / 1e9:>11.1f} "
        f"{100 * values['mfu']:>7.1f} %"
    )


def render(results: dict) -> str:
    """Size, matmul peak, training throughput (ours, each switch, peers), ratios, decoding speed."""
    size = results["size"]
    lines = [
        "tx-bench: " + ", ".join(f"{key} {value}" for key, value in size.items()),
        "matmul peak: "
        + ", ".join(
            f"{dtype} {flops / 1e9:.1f} GFLOP/s" for dtype, flops in results["peak_flops_per_s"].items()
        ),
        "",
        f"training                           {'tokens/s':>10} {'GFLOP/s':>11} {'MFU(fp32)':>9}",
    ]
    training = results["training"]
    lines.append(_row(f"ours (defaults: {training['ours']['settings']})", training["ours"]))
    lines.append(_row("keras.layers.MultiHeadAttention", training["keras_mha"]))
    lines.append(_row("KerasHub Transformer{En,De}coder", training["keras_hub"]))
    lines.append("  ours, one switch at a time:")
    lines += [_row(f"  {label}", values) for label, values in results["switches"].items()]
    lines.append("")
    lines += [f"ratio {name}: {ratio:.2f}x" for name, ratio in results["ratios"].items()]
    lines += ["", f"greedy decoding (batch {size['batch']})  {'uncached':>10} {'cached':>10} {'speedup':>8}"]
    for key, rates in results["decoding"].items():
        if isinstance(rates, dict):
            lines.append(
                f"  {key + ' output tokens':<32} {rates['uncached']:>10,.0f} {rates['cached']:>10,.0f} "
                f"{rates['speedup']:>7.1f}x   tokens/s"
            )
        else:
            outputs = key.rsplit("_", 1)[1]
            lines.append(
                f"  SavedModel translate, {outputs} tokens {'':>10} {rates:>10,.0f}           tokens/s"
            )
    return "\n".join(lines)
