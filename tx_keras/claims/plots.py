"""The report's pictures: the metric per setting with its seed spread, the diagnostics at initialisation
per layer, and the accuracy curves against training steps."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tx_keras.claims.seed_statistics import SeedStats
from tx_keras.claims.settings import Setting, label, short_label
from tx_keras.run_folder.atomic_write import write_figure

# One line per setting: {setting: {layer name: mean over seeds}}.
LayerValues = Mapping[Setting, Mapping[str, float]]

_LAYER = re.compile(r"^(encoder|decoder)/layer_(\d+)$")


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def plot_metric(stats: Mapping[Setting, SeedStats], knobs: tuple[str, ...], metric: str, path: Path) -> None:
    """Every seed as a dot and the mean ± sd as a bar per setting (settings in the order given)."""
    settings = list(stats)
    figure = _figure(max(5.0, 0.55 * len(settings) + 2), 4.5)
    axes = figure.add_subplot()
    for x, setting in enumerate(settings):
        result = stats[setting]
        if result.values:
            axes.scatter([x] * result.n, result.values, color="tab:blue", alpha=0.6, s=18, zorder=3)
            spread = 0.0 if math.isnan(result.sd) else result.sd
            axes.errorbar(x, result.mean, yerr=spread, fmt="_", color="black", markersize=16, capsize=4)
    labels = [short_label(s, knobs) for s in settings]
    crowded = len(settings) > 4
    axes.set_xticks(range(len(settings)), labels, fontsize=8)
    if crowded:
        axes.tick_params(axis="x", labelrotation=35)
        for tick in axes.get_xticklabels():
            tick.set_horizontalalignment("right")
    axes.set_xlabel(" / ".join(knob.rsplit(".", 1)[-1] for knob in knobs))
    axes.set_ylabel(metric)
    if all(0.0 <= value <= 1.0 for result in stats.values() for value in result.values):
        axes.set_ylim(-0.02, 1.02)  # a 0-1 score on its whole scale; chrF / BLEU (0-100) scale themselves
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    write_figure(path, figure)


def layer_series(values: Mapping[str, float]) -> dict[str, tuple[list[int], list[float]]]:
    """`{"encoder/layer_2": v, ...}` -> {"encoder": ([1, 2, ...], [v1, v2, ...]), "decoder": ...}: the
    per-block values in depth order (embedding, final norm and logits are left out)."""
    series: dict[str, list[tuple[int, float]]] = {}
    for name, value in values.items():
        match = _LAYER.match(name)
        if match:
            series.setdefault(match.group(1), []).append((int(match.group(2)), value))
    return {
        stack: ([i for i, _ in sorted(points)], [v for _, v in sorted(points)])
        for stack, points in series.items()
    }


def plot_layers(values: LayerValues, knobs: tuple[str, ...], ylabel: str, path: Path, log: bool) -> None:
    """One panel per stack (encoder, decoder): the value at each layer, one line per setting."""
    figure = _figure(11, 4.5)
    for i, stack in enumerate(("encoder", "decoder")):
        axes = figure.add_subplot(1, 2, i + 1)
        for setting, by_layer in values.items():
            layers, points = layer_series(by_layer).get(stack, ([], []))
            if layers:
                axes.plot(layers, points, marker="o", label=label(setting, knobs))
        axes.set_title(stack)
        axes.set_xlabel("layer")
        axes.set_ylabel(ylabel)
        if log:
            axes.set_yscale("log")
        axes.grid(alpha=0.3)
        if axes.lines:
            axes.legend(fontsize=6)
    figure.tight_layout()
    write_figure(path, figure)


def plot_curves(
    curves: Mapping[Setting, list[tuple[list[int], list[float]]]],
    knobs: tuple[str, ...],
    target: float,
    path: Path,
) -> None:
    """Validation accuracy against training steps: each seed a thin line, the target as a dashed line."""
    figure = _figure(8, 4.5)
    axes = figure.add_subplot()
    colors = [f"C{i % 10}" for i in range(len(curves))]
    for color, (setting, runs) in zip(colors, curves.items(), strict=True):
        for j, (steps, values) in enumerate(runs):
            axes.plot(steps, values, color=color, alpha=0.7, label=label(setting, knobs) if j == 0 else None)
    axes.axhline(target, color="black", linestyle="--", linewidth=0.8)
    axes.set_xlabel("training step")
    axes.set_ylabel("validation token accuracy")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    write_figure(path, figure)
