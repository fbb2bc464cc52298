"""Two pictures of a sweep: the validation curves overlaid, and the metric against each swept knob."""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

from tx_keras.comparison.sweep_runs import RunRecord
from tx_keras.run_folder.atomic_write import write_figure


def validation_curve(run_dir: Path, tag: str = "epoch_loss") -> tuple[list[int], list[float]]:
    """A run's validation curve from its event files (all of them: a resumed run has several)."""
    folder = run_dir / "validation"
    if not folder.is_dir():
        return [], []
    events = event_accumulator.EventAccumulator(str(folder), size_guidance={event_accumulator.TENSORS: 0})
    events.Reload()
    if tag not in events.Tags()["tensors"]:
        return [], []
    records = sorted(events.Tensors(tag), key=lambda record: record.step)
    steps = [record.step + 1 for record in records]  # Keras counts epochs from 0
    return steps, [float(tensor_util.make_ndarray(r.tensor_proto)) for r in records]


def plot_curves(runs: list[RunRecord], path: Path) -> None:
    """Validation loss per epoch of every run, overlaid and labelled by the run's overrides."""
    figure = Figure(figsize=(8, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for run in runs:
        steps, values = validation_curve(run.path)
        if steps:
            label = ", ".join(f"{key}={value}" for key, value in run.overrides.items()) or run.name
            axes.plot(steps, values, marker="o", label=f"{label} ({run.status})")
    axes.set_xlabel("epoch")
    axes.set_ylabel("validation loss")
    axes.set_yscale("log")
    axes.legend(fontsize=7)
    figure.tight_layout()
    write_figure(path, figure)


def plot_metric_by_knob(runs: list[RunRecord], metric: str, path: Path) -> None:
    """One panel per swept knob: the metric of every run against that knob's value."""
    knobs = sorted({key for run in runs for key in run.overrides})
    figure = Figure(figsize=(4 * max(len(knobs), 1), 3.5), dpi=100)
    FigureCanvasAgg(figure)
    for i, knob in enumerate(knobs or ["run"]):
        axes = figure.add_subplot(1, max(len(knobs), 1), i + 1)
        points = [(run.overrides.get(knob, run.name), run.metrics.get(metric, math.nan)) for run in runs]
        labels = sorted({label for label, _ in points}, key=_natural)
        axes.scatter([labels.index(label) for label, _ in points], [value for _, value in points])
        axes.set_xticks(range(len(labels)), labels, rotation=30, fontsize=8)
        axes.set_xlabel(knob)
        axes.set_ylabel(metric)
    figure.tight_layout()
    write_figure(path, figure)


def _natural(label: str) -> tuple[int, float | str]:
    """Numbers in numeric order, then words."""
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)
